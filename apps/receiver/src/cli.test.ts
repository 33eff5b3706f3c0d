import { spawn } from 'node:child_process'
import { readFileSync, writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { dirname, join } from 'node:path'
import { run, type Io } from '@adwire/cli'
import { generateSigningKey, type AdcpJwk } from '@adwire/http-signatures'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { RunningReceiver } from './service.js'
import {
  ADMIN_TOKEN,
  BEARER_TOKEN,
  envelope,
  HMAC_SECRET,
  sendBearer,
  sendHmac,
  sendSigned,
  startTestReceiver,
  tempDir,
} from './testing/receiver.js'

const folder = tempDir('adwire-receiver-cli-')
const write = (name: string, content: string) => {
  const file = join(folder, name)
  writeFileSync(file, content)
  return file
}
const bin = join(dirname(createRequire(import.meta.url).resolve('@adwire/cli/package.json')), 'dist/bin.js')

let receiver: RunningReceiver
let privateJwk: AdcpJwk
let jwksFile: string

beforeAll(async () => {
  const key = await generateSigningKey({ alg: 'ed25519', kid: 'cli-key' })
  privateJwk = key.privateJwk
  jwksFile = write('jwks.json', JSON.stringify(key.jwks))
  receiver = await startTestReceiver()
})

afterAll(async () => {
  await receiver?.close()
})

async function adwire(...argv: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  let stdout = ''
  let stderr = ''
  const io: Io = {
    stdout: (text) => (stdout += text),
    stderr: (text) => (stderr += text),
    read: async (file) => readFileSync(file),
  }
  const code = await run(argv, io)
  return { code, stdout, stderr }
}

const lines = (text: string) =>
  text
    .trim()
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line) as Record<string, unknown>)

const connection = () => ['--url', receiver.url, '--token', ADMIN_TOKEN]

describe('adwire receiver', () => {
  it('registers with a JWKS file and lists the events a delivery published', async () => {
    const registered = await adwire(
      'receiver',
      'register',
      ...connection(),
      '--jwks',
      jwksFile,
      '--shape',
      'mcp',
    )
    expect(registered.code, registered.stderr).toBe(0)
    const [created] = lines(registered.stdout) as [{ id: string; url: string }]
    expect(Object.keys(created)).toEqual(['id', 'url'])
    expect(created.url).toBe(`${receiver.url}/webhooks/${created.id}`)

    const payload = envelope({ status: 'working' })
    expect((await sendSigned(created.url, payload, privateJwk)).status).toBe(200)
    const listed = await adwire('receiver', 'events', ...connection(), '--registration', created.id)
    expect(listed.code, listed.stderr).toBe(0)
    expect(lines(listed.stdout)).toEqual([
      {
        idempotency_key: payload.idempotency_key,
        operation_id: 'op_1',
        task_id: payload.task_id,
        status: 'working',
        received_at: expect.any(String),
        publications: 1,
      },
    ])
  })

  it('registers legacy HMAC and Bearer deliveries from secret files', async () => {
    const hmac = await adwire(
      'receiver',
      'register',
      ...connection(),
      '--hmac-secret-file',
      write('secret.txt', `${HMAC_SECRET}\n`),
    )
    const bearer = await adwire(
      'receiver',
      'register',
      ...connection(),
      '--bearer-token-file',
      write('bearer.txt', BEARER_TOKEN),
    )
    const [hmacRegistration] = lines(hmac.stdout) as [{ url: string }]
    const [bearerRegistration] = lines(bearer.stdout) as [{ url: string }]
    expect((await sendHmac(hmacRegistration.url, envelope())).status).toBe(200)
    expect((await sendBearer(bearerRegistration.url, envelope())).status).toBe(200)
  })

  it('registers two URLs of one seller with --sender: they share one keyspace', async () => {
    const register = async () => {
      const result = await adwire(
        'receiver',
        'register',
        ...connection(),
        '--jwks',
        jwksFile,
        '--sender',
        'https://seller.example.com/mcp',
      )
      expect(result.code, result.stderr).toBe(0)
      return (lines(result.stdout) as [{ url: string }])[0]
    }
    const first = await register()
    const second = await register()
    const payload = envelope()
    const answer = async (url: string) => (await sendSigned(url, payload, privateJwk)).body
    expect(await answer(first.url)).toEqual({ status: 'accepted' })
    expect(await answer(second.url)).toEqual({ status: 'duplicate' })
  })

  it('registers --publisher-domain and --revocation-url, and refuses them where they do not apply', async () => {
    const pinned = await adwire(
      'receiver',
      'register',
      ...connection(),
      '--agent-url',
      'https://ads.seller.example/mcp',
      '--publisher-domain',
      'publisher.example',
      '--revocation-url',
      'https://ads.seller.example/revocations.json',
    )
    expect(pinned.code, pinned.stderr).toBe(0)
    const [created] = lines(pinned.stdout) as [{ id: string }]
    const shown = await fetch(`${receiver.url}/api/registrations/${created.id}`, {
      headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
    })
    expect(await shown.json()).toMatchObject({
      publisher_domain: 'publisher.example',
      revocation_url: 'https://ads.seller.example/revocations.json',
    })
    const withJwks = ['--jwks', jwksFile, '--publisher-domain', 'publisher.example']
    expect((await adwire('receiver', 'register', ...connection(), ...withJwks)).code).toBe(2)
    const hmac = [
      '--hmac-secret-file',
      write('secret.txt', HMAC_SECRET),
      '--revocation-url',
      'https://a.example/r',
    ]
    expect((await adwire('receiver', 'register', ...connection(), ...hmac)).code).toBe(2)
    const insecure = await adwire(
      'receiver',
      'register',
      ...connection(),
      '--jwks',
      jwksFile,
      '--revocation-url',
      'http://127.0.0.1:9/r.json',
    )
    expect(insecure).toMatchObject({
      code: 1,
      stderr: expect.stringMatching(/revocation_url: must be an https URL/),
    })
  })

  it('registers --via-capabilities (with --agent-protocol), and refuses it where it does not apply', async () => {
    const registered = await adwire(
      'receiver',
      'register',
      ...connection(),
      '--agent-url',
      'https://ads.seller.example/a2a',
      '--via-capabilities',
      '--agent-protocol',
      'a2a',
    )
    expect(registered.code, registered.stderr).toBe(0)
    const [created] = lines(registered.stdout) as [{ id: string }]
    const shown = await fetch(`${receiver.url}/api/registrations/${created.id}`, {
      headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
    })
    expect(await shown.json()).toMatchObject({
      agent_url: 'https://ads.seller.example/a2a',
      key_discovery: 'capabilities',
      agent_protocol: 'a2a',
    })
    for (const wrong of [
      ['--jwks', jwksFile, '--via-capabilities'],
      [
        '--agent-url',
        'https://a.example/mcp',
        '--via-capabilities',
        '--brand-json-url',
        'https://a.example/b',
      ],
      ['--agent-url', 'https://a.example/mcp', '--agent-protocol', 'a2a'],
      ['--agent-url', 'https://a.example/mcp', '--via-capabilities', '--agent-protocol', 'grpc'],
    ]) {
      const result = await adwire('receiver', 'register', ...connection(), ...wrong)
      expect(result.code, wrong.join(' ')).toBe(2)
    }
  })

  it('reports what the receiver refused, with exit code 1, and usage mistakes with 2', async () => {
    const weak = await adwire(
      'receiver',
      'register',
      ...connection(),
      '--hmac-secret-file',
      write('weak.txt', 'short'),
    )
    expect(weak.code).toBe(1)
    expect(weak.stderr).toMatch(/400 invalid_registration/)
    const badToken = await adwire(
      'receiver',
      'events',
      '--url',
      receiver.url,
      '--token',
      'wrong-token',
      '--registration',
      'x',
    )
    expect(badToken).toMatchObject({ code: 1, stderr: expect.stringMatching(/403 forbidden/) })
    expect((await adwire('receiver', 'register', ...connection())).code).toBe(2)
    expect(
      (
        await adwire(
          'receiver',
          'register',
          ...connection(),
          '--jwks',
          jwksFile,
          '--jwks-uri',
          'https://a.example/j',
        )
      ).code,
    ).toBe(2)
    expect((await adwire('receiver', 'events', ...connection())).code).toBe(2)
    expect(await adwire('receiver', 'register', '--help')).toMatchObject({
      code: 0,
      stdout: expect.stringContaining('--jwks FILE'),
    })
  })

  it('follows the stream: past events first, then new ones as they arrive', async () => {
    const [created] = lines(
      (await adwire('receiver', 'register', ...connection(), '--jwks', jwksFile)).stdout,
    ) as [{ id: string; url: string }]
    const before = envelope({ status: 'submitted' })
    const after = envelope({ status: 'completed', result: {} })
    await sendSigned(created.url, before, privateJwk)
    const child = spawn(
      process.execPath,
      [bin, 'receiver', 'events', ...connection(), '--registration', created.id, '--follow'],
      {
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    )
    try {
      let output = ''
      let errors = ''
      child.stderr.on('data', (chunk: Buffer) => {
        errors += chunk.toString()
      })
      const waiting = new Set<() => void>()
      child.stdout.on('data', (chunk: Buffer) => {
        output += chunk.toString()
        for (const check of waiting) check()
      })
      const seen = (count: number) =>
        new Promise<void>((resolve, reject) => {
          const check = () => {
            if (output.split('\n').filter(Boolean).length < count) return
            waiting.delete(check)
            resolve()
          }
          waiting.add(check)
          child.once('exit', (code) => reject(new Error(`adwire exited with ${code}: ${errors}`)))
          check()
        })
      await seen(1)
      await sendSigned(created.url, after, privateJwk)
      await seen(2)
      expect(lines(output).map((line) => [line.idempotency_key, line.status])).toEqual([
        [before.idempotency_key, 'submitted'],
        [after.idempotency_key, 'completed'],
      ])
    } finally {
      child.kill('SIGTERM')
    }
  })
})

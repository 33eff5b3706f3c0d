import { execFile } from 'node:child_process'
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { describe, expect, it } from 'vitest'
import { readConformanceJson } from '@adwire/conformance'
import { run, type Io } from './index.js'
import { version } from './version.js'

const here = path.dirname(fileURLToPath(import.meta.url))
const folder = mkdtempSync(path.join(tmpdir(), 'adwire-cli-'))
const write = (name: string, content: unknown) => {
  const file = path.join(folder, name)
  writeFileSync(file, typeof content === 'string' ? content : JSON.stringify(content))
  return file
}

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

describe('adwire', () => {
  it('prints help and the version', async () => {
    expect(await adwire('--help')).toMatchObject({
      code: 0,
      stdout: expect.stringContaining('usage: adwire <command>'),
    })
    expect(await adwire('--version')).toMatchObject({ code: 0, stdout: `${version}\n` })
    expect(await adwire()).toMatchObject({ code: 2 })
    for (const command of ['schemas', 'webhook']) {
      expect(await adwire(command, '--help')).toMatchObject({
        code: 0,
        stdout: expect.stringContaining(`usage: adwire ${command}`),
      })
    }
  })

  it('keeps its version equal to package.json', () => {
    expect(JSON.parse(readFileSync(path.join(here, '../package.json'), 'utf8')).version).toBe(version)
  })

  it('answers mistakes with exit code 2 and a message', async () => {
    expect(await adwire('nope')).toMatchObject({
      code: 2,
      stderr: expect.stringContaining('unknown command "nope"'),
    })
    expect(await adwire('schemas', 'validate', 'Nonexistent', write('x.json', {}))).toMatchObject({
      code: 2,
      stderr: expect.stringContaining('unknown shape "Nonexistent"'),
    })
    expect(await adwire('webhook', 'parse', '--format', 'soap', write('y.json', {}))).toMatchObject({
      code: 2,
      stderr: expect.stringContaining('--format must be mcp or a2a'),
    })
    expect(await adwire('schemas', 'validate', 'Format', path.join(folder, 'missing.json'))).toMatchObject({
      code: 2,
      stderr: expect.stringContaining('ENOENT'),
    })
  })

  it('schemas validate prints the verdict as one JSON line', async () => {
    const good = write('good.json', { agent_url: 'https://creative.example.com', id: 'display_300x250' })
    expect(await adwire('schemas', 'validate', 'FormatId', good)).toEqual({
      code: 0,
      stdout: '{"ok":true}\n',
      stderr: '',
    })
    const bad = await adwire('schemas', 'validate', 'formatid', write('bad.json', '"display_300x250"'))
    expect(bad.code).toBe(1)
    expect(JSON.parse(bad.stdout)).toMatchObject({
      ok: false,
      code: 'INVALID_REQUEST',
      issues: [{ path: '' }],
    })
    const notJson = await adwire('schemas', 'validate', 'FormatId', write('broken.json', '{'))
    expect(JSON.parse(notJson.stdout)).toMatchObject({
      ok: false,
      message: expect.stringContaining('not JSON'),
    })
  })

  it('schemas list names the exported shapes', async () => {
    const { stdout } = await adwire('schemas', 'list')
    expect(stdout.split('\n')).toEqual(
      expect.arrayContaining(['Format', 'McpWebhookPayload', 'ListCreativeFormatsRequest']),
    )
  })

  it('webhook parse extracts the data of every payload-extraction vector', async () => {
    const { vectors } = readConformanceJson('test-vectors/webhook-payload-extraction.json') as {
      vectors: Array<{ id: string; payload: unknown; expected_format: string; expected_data: unknown }>
    }
    for (const vector of vectors) {
      const result = await adwire('webhook', 'parse', write(`${vector.id}.json`, vector.payload))
      expect(result.code, vector.id).toBe(0)
      expect(JSON.parse(result.stdout), vector.id).toMatchObject({
        ok: true,
        format: vector.expected_format,
        data: vector.expected_data,
      })
    }
  })

  it('runs as a real process from the build', async () => {
    const bin = path.join(here, '../dist/bin.js')
    const file = write('task.json', { id: 't', status: { state: 'TASK_STATE_WORKING' } })
    const { stdout } = await promisify(execFile)(process.execPath, [bin, 'webhook', 'parse', file])
    expect(JSON.parse(stdout)).toMatchObject({ ok: true, format: 'a2a', status: 'working', terminal: false })
  })
})

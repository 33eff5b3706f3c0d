/**
 * The sales agent (apps/sales-agent) from the outside, for the end-to-end tests: its child process on a fixed
 * port (so a restart keeps its URL and its JWKS location), and an HTTP proxy in front of a receiver that can
 * hold one webhook until the test lets it through.
 */
import { spawn } from 'node:child_process'
import { createServer, request as httpRequest, type Server } from 'node:http'
import { createRequire } from 'node:module'
import type { AddressInfo } from 'node:net'
import { fileURLToPath } from 'node:url'

/** A free port on 127.0.0.1 (listened on and released). */
export async function freePort(): Promise<number> {
  const server = createServer()
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  await new Promise<void>((resolve) => server.close(() => resolve()))
  return port
}

export interface AgentProcess {
  readonly url: string
  output(): string
  /** SIGKILL, then waits for the process to be gone. */
  kill(): Promise<void>
  /** SIGTERM, then waits (SIGKILL after 10 s). */
  stop(): Promise<void>
}

/**
 * How node runs a TypeScript entry: as it is where node strips the types itself (22.18 and later; its loader
 * hooks make tsx take seconds longer to start the agent), through tsx elsewhere.
 */
const typescriptArgs = (entry: string): string[] =>
  (process.features as { typescript?: unknown }).typescript
    ? [entry]
    : ['--import', createRequire(import.meta.url).resolve('tsx'), entry]

/** Spawns `sales-agent-child.ts` with `env` on 127.0.0.1 and resolves once /health answers 200. */
export async function spawnSalesAgent(env: Record<string, string>): Promise<AgentProcess> {
  const entry = fileURLToPath(new URL('./sales-agent-child.ts', import.meta.url))
  const child = spawn(process.execPath, typescriptArgs(entry), {
    env: { PATH: process.env.PATH ?? '', HOST: '127.0.0.1', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let output = ''
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()))
  const url = await new Promise<string>((resolve, reject) => {
    const onData = (chunk: Buffer) => {
      output += chunk.toString()
      const match = /sales-agent: listening on (http:\/\/\S+)/.exec(output)
      if (match) resolve(match[1]!)
    }
    child.stdout.on('data', onData)
    child.stderr.on('data', onData)
    void exited.then(() => reject(new Error(`the sales agent exited before listening:\n${output}`)))
  })
  for (let attempt = 0; (await fetch(`${url}/health`).catch(() => undefined))?.status !== 200; attempt++) {
    if (attempt > 100) throw new Error(`the sales agent never became healthy:\n${output}`)
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
  const gone = async (signal: NodeJS.Signals) => {
    if (child.exitCode === null && child.signalCode === null) child.kill(signal)
    await exited
  }
  return {
    url,
    output: () => output,
    kill: () => gone('SIGKILL'),
    async stop() {
      const timer = setTimeout(() => child.kill('SIGKILL'), 10_000)
      await gone('SIGTERM')
      clearTimeout(timer)
    },
  }
}

/** A proxy that forwards byte for byte (Host kept) and can hold the next POST to a path. */
export interface HoldingProxy {
  readonly url: string
  /**
   * Holds the next POST whose path starts with `prefix`: resolves when it arrived, with `release()` that
   * forwards it to the target (its answer then goes nowhere if the sender is gone).
   */
  holdNext(prefix: string): Promise<{ body: string; release(): Promise<number> }>
  /** The POST bodies the target has answered (held ones once released), in the order of the answers. */
  readonly answered: readonly string[]
  close(): Promise<void>
}

export async function startHoldingProxy(target: () => URL): Promise<HoldingProxy> {
  let hold:
    { prefix: string; arrived: (held: { body: string; release(): Promise<number> }) => void } | undefined
  const forward = (method: string, path: string, headers: Record<string, unknown>, body: Buffer) =>
    new Promise<{ status: number; headers: Record<string, unknown>; body: Buffer }>((resolve, reject) => {
      const out = httpRequest(
        { host: target().hostname, port: target().port, method, path, headers: headers as never },
        (answer) => {
          const chunks: Buffer[] = []
          answer.on('data', (chunk: Buffer) => chunks.push(chunk))
          answer.on('end', () =>
            resolve({
              status: answer.statusCode ?? 502,
              headers: answer.headers,
              body: Buffer.concat(chunks),
            }),
          )
        },
      )
      out.on('error', reject)
      out.end(body)
    })
  const answered: string[] = []
  const server: Server = createServer((incoming, outgoing) => {
    const chunks: Buffer[] = []
    incoming.on('data', (chunk: Buffer) => chunks.push(chunk))
    incoming.on('end', () => {
      const body = Buffer.concat(chunks)
      const path = incoming.url ?? '/'
      const send = async () => {
        const answer = await forward(incoming.method ?? 'GET', path, incoming.headers, body)
        if (incoming.method === 'POST') answered.push(body.toString('utf8'))
        if (!outgoing.destroyed) outgoing.writeHead(answer.status, answer.headers as never).end(answer.body)
        return answer.status
      }
      if (hold && incoming.method === 'POST' && path.startsWith(hold.prefix)) {
        const { arrived } = hold
        hold = undefined
        arrived({ body: body.toString('utf8'), release: send })
        return
      }
      send().catch(() => outgoing.destroy())
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    holdNext: (prefix) => new Promise((arrived) => (hold = { prefix, arrived })),
    answered,
    async close() {
      server.closeAllConnections()
      await new Promise<void>((resolve) => server.close(() => resolve()))
    },
  }
}

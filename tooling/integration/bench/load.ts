/**
 * A lean HTTP/1.1 load generator for the benches: one keep-alive TCP connection per request in flight, each
 * request serialised to bytes once before the clock starts, responses read with a minimal parser (status,
 * Content-Length or chunked body). The benches run the service and the load on the same two cores, so the
 * load must cost as little CPU as possible: global fetch (undici) spent about as much CPU per request as the
 * service it measured, which capped every row at half the machine.
 */
import { connect, type Socket } from 'node:net'

/** A request as the signer produced it. */
export interface LoadRequest {
  readonly url: string
  readonly method?: string
  readonly headers: Readonly<Record<string, string>>
  readonly body: string
}

/** One answer, as the parser read it. */
export interface LoadAnswer {
  readonly status: number
  readonly body: string
}

export interface LoadResult {
  /** Requests answered per second, over the whole run. */
  readonly rate: number
  /** Latency percentiles, ms, from the first byte written to the last byte of the answer. */
  readonly p50: number
  readonly p99: number
}

/** A request ready to send: where to, and its bytes on the wire. */
export interface Prepared {
  readonly host: string
  readonly port: number
  readonly bytes: Buffer
}

/** `request` ready to send ({@link serialise}d once, before the clock starts). */
export function prepare(request: LoadRequest): Prepared {
  const url = new URL(request.url)
  return { host: url.hostname, port: Number(url.port || 80), bytes: serialise(request) }
}

/** The bytes of `request` on the wire: request line, Host, its headers, Content-Length, body. */
export function serialise(request: LoadRequest): Buffer {
  const url = new URL(request.url)
  const body = Buffer.from(request.body)
  let head = `${request.method ?? 'POST'} ${url.pathname}${url.search} HTTP/1.1\r\nhost: ${url.host}\r\n`
  for (const [name, value] of Object.entries(request.headers)) {
    if (name.toLowerCase() === 'content-length' || name.toLowerCase() === 'host') continue
    head += `${name}: ${value}\r\n`
  }
  head += `content-length: ${body.byteLength}\r\n\r\n`
  return Buffer.concat([Buffer.from(head, 'latin1'), body])
}

/**
 * A keep-alive connection that sends one request at a time and resolves with its answer. A connection the
 * server closed while idle is opened again on the next request (the request is then sent on the new one).
 */
class Connection {
  #socket: Socket | undefined
  #buffer: Buffer = Buffer.alloc(0)
  #pending: { resolve: (answer: LoadAnswer) => void; reject: (error: Error) => void } | undefined

  constructor(
    private readonly host: string,
    private readonly port: number,
  ) {}

  async #open(): Promise<Socket> {
    if (this.#socket && !this.#socket.destroyed) return this.#socket
    const socket = connect({ host: this.host, port: this.port, noDelay: true })
    await new Promise<void>((resolve, reject) => {
      socket.once('connect', resolve)
      socket.once('error', reject)
    })
    socket.on('data', (chunk: Buffer) => this.#data(chunk))
    const fail = (error?: Error) => {
      if (this.#socket === socket) this.#socket = undefined
      const pending = this.#pending
      this.#pending = undefined
      this.#buffer = Buffer.alloc(0)
      pending?.reject(error ?? new Error('the connection closed before the answer'))
    }
    socket.on('error', fail)
    socket.on('close', () => fail())
    this.#socket = socket
    return socket
  }

  async send(bytes: Buffer): Promise<LoadAnswer> {
    const socket = await this.#open()
    return new Promise<LoadAnswer>((resolve, reject) => {
      this.#pending = { resolve, reject }
      socket.write(bytes)
    })
  }

  #data(chunk: Buffer): void {
    this.#buffer = this.#buffer.byteLength === 0 ? chunk : Buffer.concat([this.#buffer, chunk])
    const answer = parseAnswer(this.#buffer)
    if (!answer) return
    this.#buffer = this.#buffer.subarray(answer.size)
    const pending = this.#pending
    this.#pending = undefined
    pending?.resolve({ status: answer.status, body: answer.body })
  }

  close(): void {
    this.#socket?.destroy()
    this.#socket = undefined
  }
}

/** A complete HTTP/1.1 answer at the start of `buffer` (and how many bytes it took), or undefined. */
export function parseAnswer(buffer: Buffer): { status: number; body: string; size: number } | undefined {
  const end = buffer.indexOf('\r\n\r\n')
  if (end < 0) return undefined
  const head = buffer.toString('latin1', 0, end)
  const status = Number(head.slice(9, 12))
  const length = /\r\ncontent-length:\s*(\d+)/i.exec(head)
  if (length) {
    const size = end + 4 + Number(length[1])
    if (buffer.byteLength < size) return undefined
    return { status, body: buffer.toString('utf8', end + 4, size), size }
  }
  if (/\r\ntransfer-encoding:\s*chunked/i.test(head)) {
    const parts: Buffer[] = []
    let at = end + 4
    for (;;) {
      const line = buffer.indexOf('\r\n', at)
      if (line < 0) return undefined
      const chunkSize = Number.parseInt(buffer.toString('latin1', at, line), 16)
      if (buffer.byteLength < line + 2 + chunkSize + 2) return undefined
      if (chunkSize === 0) return { status, body: Buffer.concat(parts).toString('utf8'), size: line + 4 }
      parts.push(buffer.subarray(line + 2, line + 2 + chunkSize))
      at = line + 2 + chunkSize + 2
    }
  }
  // No body framing: an answer without a body (204, 304).
  return { status, body: '', size: end + 4 }
}

/**
 * Sends every request once, `inFlight` at a time (each of the `inFlight` lanes keeps one connection per
 * server), and returns the rate and latencies. `check` sees each answer; the first failure it returns is
 * thrown after the run. A request whose connection was closed under it (the server's idle timeout) is sent
 * once more on a new connection.
 *
 * @example
 * const { rate } = await runLoad(messages.map(prepare), 16, (a) => (a.status === 200 ? undefined : a.body))
 */
export async function runLoad(
  requests: readonly Prepared[],
  inFlight: number,
  check: (answer: LoadAnswer) => string | undefined,
): Promise<LoadResult> {
  const latencies: number[] = new Array(requests.length)
  const lanes = Array.from({ length: inFlight }, () => new Map<string, Connection>())
  let next = 0
  let failure: string | undefined
  const began = performance.now()
  try {
    await Promise.all(
      lanes.map(async (lane) => {
        while (next < requests.length) {
          const index = next++
          const { host, port, bytes } = requests[index]!
          const where = `${host}:${port}`
          let connection = lane.get(where)
          if (!connection) lane.set(where, (connection = new Connection(host, port)))
          const sent = performance.now()
          const answer = await connection.send(bytes).catch(() => connection.send(bytes))
          latencies[index] = performance.now() - sent
          failure ??= check(answer)
        }
      }),
    )
  } finally {
    for (const lane of lanes) for (const connection of lane.values()) connection.close()
  }
  const seconds = (performance.now() - began) / 1000
  if (failure) throw new Error(failure)
  latencies.sort((a, b) => a - b)
  const at = (share: number) =>
    latencies[Math.min(latencies.length - 1, Math.floor(share * latencies.length))]!
  return { rate: requests.length / seconds, p50: at(0.5), p99: at(0.99) }
}

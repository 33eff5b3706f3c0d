/**
 * The sales agent under a crash test: its child process (sales-agent-child.ts) on a fixed port, SIGKILLed
 * whenever the test says and restarted on the same database, and an official MCP client per incarnation. A
 * call that a kill cut short rejects with {@link CutError}: whether it took effect is unknown, and the caller
 * reads the state back once the agent is up again. Each restart moves the agent's clock `restartJumpSeconds`
 * ahead (CLOCK_OFFSET_SECONDS), standing for a restart that comes once every lease the dead process held has
 * expired (due work 120 s, idempotency in-flight claims 300 s, outbox attempts).
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { freePort, spawnSalesAgent, type AgentProcess } from './sales-agent-support.js'

/** A parsed tool answer: tests read it freely. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type Answer = any

/** The call was on the wire when the agent was killed: it may or may not have taken effect. */
export class CutError extends Error {
  constructor(tool: string) {
    super(`${tool} was cut by a kill`)
  }
}

/** The agent answered the call with an error (isError). */
export class ToolError extends Error {
  constructor(
    readonly tool: string,
    readonly code: string,
    readonly answer: Answer,
  ) {
    super(`${tool} answered ${code}: ${JSON.stringify(answer).slice(0, 600)}`)
  }
}

export interface CrashAgentOptions {
  /** The agent's environment less PORT and CLOCK_OFFSET_SECONDS (set here). */
  readonly env: Record<string, string>
  /** The buyer's bearer token. */
  readonly token: string
  /** How far each restart moves the agent's clock, seconds. */
  readonly restartJumpSeconds: number
}

/**
 * @example
 * const agent = await CrashAgent.start({ env, token, restartJumpSeconds: 310 })
 * await agent.call('list_accounts', {})
 * await agent.kill() // SIGKILL, restart on the same database
 */
export class CrashAgent {
  /** Seconds the agent's clock runs ahead of the machine's (the receiver is given the same clock). */
  offset = 0
  /** Kills so far. */
  kills = 0
  /** Milliseconds each restart took until the agent answered. */
  readonly restartMs: number[] = []
  #generation = 0
  #port = 0
  #process: AgentProcess | undefined
  #client: Client | undefined
  #ready: Promise<void> = Promise.resolve()
  readonly #options: CrashAgentOptions

  private constructor(options: CrashAgentOptions) {
    this.#options = options
  }

  static async start(options: CrashAgentOptions): Promise<CrashAgent> {
    const agent = new CrashAgent(options)
    agent.#port = await freePort()
    await agent.#spawn()
    return agent
  }

  /** The agent's clock, Unix seconds. */
  readonly now = () => Date.now() / 1000 + this.offset

  get url(): string {
    return `http://127.0.0.1:${this.#port}`
  }

  /** What the current incarnation printed (for failure messages). */
  output(): string {
    return this.#process?.output() ?? ''
  }

  /** Resolves once the agent is up (at once when it is). */
  ready(): Promise<void> {
    return this.#ready
  }

  /**
   * Calls a tool once the agent is up: resolves with its structured answer, rejects with {@link ToolError}
   * when it answered an error, with {@link CutError} when a kill came while it was on the wire.
   */
  async call(tool: string, args: Record<string, unknown>): Promise<Answer> {
    await this.#ready
    const generation = this.#generation
    const client = this.#client!
    let result: Answer
    try {
      result = await client.callTool({ name: tool, arguments: args }, undefined, { timeout: 30_000 })
    } catch (error) {
      if (generation !== this.#generation) throw new CutError(tool)
      throw error
    }
    const answer = result.structuredContent
    if (result.isError) {
      const code = answer?.adcp_error?.code ?? answer?.errors?.[0]?.code ?? 'UNKNOWN'
      throw new ToolError(tool, String(code), answer)
    }
    return answer
  }

  /** SIGKILL, then a restart on the same database with the clock moved on; calls wait meanwhile. */
  async kill(): Promise<void> {
    let up!: () => void
    let failed!: (error: unknown) => void
    this.#ready = new Promise<void>((resolve, reject) => {
      up = resolve
      failed = reject
    })
    // Calls that see the new generation and fail were cut by this kill.
    this.#generation++
    this.kills++
    const dead = this.#process!
    const client = this.#client!
    await dead.kill()
    void client.close().catch(() => undefined)
    this.offset += this.#options.restartJumpSeconds
    const started = Date.now()
    try {
      await this.#spawn()
      this.restartMs.push(Date.now() - started)
      up()
    } catch (error) {
      failed(error)
      throw error
    }
  }

  /** SIGTERM (graceful), for the end of the test. */
  async stop(): Promise<void> {
    await this.#client?.close().catch(() => undefined)
    await this.#process?.stop()
  }

  async #spawn(): Promise<void> {
    this.#process = await spawnSalesAgent({
      ...this.#options.env,
      PORT: String(this.#port),
      CLOCK_OFFSET_SECONDS: String(this.offset),
    })
    const client = new Client({ name: 'crash-buyer', version: '1.0.0' })
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`${this.url}/mcp`), {
        requestInit: { headers: { authorization: `Bearer ${this.#options.token}` } },
      }),
    )
    this.#client = client
  }
}

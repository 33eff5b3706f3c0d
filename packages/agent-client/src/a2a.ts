/** The A2A side: the official `@a2a-js/sdk` client (JSON-RPC, A2A 1.0 and 0.3), AdCP extension on. */
import { Role, type Part, type Task } from '@a2a-js/sdk'
import {
  ClientFactory,
  ClientFactoryOptions,
  DefaultAgentCardResolver,
  JsonRpcTransportFactory,
  ServiceParameters,
  withA2AExtensions,
  type Client,
} from '@a2a-js/sdk/client'
import { a2aInvocationData } from './a2a-message.js'
import type { AgentConnection, TransportOptions } from './connection.js'
import { ADCP_A2A_EXTENSION } from './extension.js'
import { withTimeout } from './limits.js'
import { failure, isRecord } from './result.js'

const dataPart = (value: Record<string, unknown>): Part => ({
  content: { $case: 'data', value },
  metadata: undefined,
  filename: '',
  mediaType: '',
})

function lastDataPart(parts: readonly Part[] | undefined): Record<string, unknown> | undefined {
  let found: Record<string, unknown> | undefined
  for (const part of parts ?? []) {
    if (part.content?.$case === 'data' && isRecord(part.content.value)) found = part.content.value
  }
  return found
}

/**
 * Reads the agent card (at `<url>/.well-known/agent-card.json`, for each of `cardUrls` in turn) and connects
 * the official A2A client, activating the AdCP extension on every message.
 *
 * @example const agent = await connectA2a(['http://127.0.0.1:4200'], { fetch, timeoutMs: 30_000, connectTimeoutMs: 5_000, clientInfo })
 */
export async function connectA2a(
  cardUrls: readonly string[],
  options: TransportOptions,
): Promise<AgentConnection> {
  const factory = new ClientFactory(
    ClientFactoryOptions.createFrom(ClientFactoryOptions.default, {
      // legacyCompat: an agent whose card offers only A2A 0.3 (agents written to earlier 3.x rules) is spoken
      // to in 0.3; a card offering 1.0 gets 1.0.
      transports: [
        new JsonRpcTransportFactory({ fetchImpl: options.fetch, legacyCompat: { enabled: true } }),
      ],
      // The card is fetched through the caller's fetch too: credentials, size cap, redirect policy, routing.
      cardResolver: new DefaultAgentCardResolver({
        fetchImpl: options.fetch,
        legacyCompat: { enabled: true },
      }),
    }),
  )
  let client: Client | undefined
  let last: unknown
  for (const url of cardUrls) {
    try {
      client = await withTimeout(
        options.connectTimeoutMs,
        `reading ${url}'s agent card`,
        () => factory.createFromUrl(url),
        options.signal,
      )
      break
    } catch (error) {
      last = error
    }
  }
  if (!client) throw last
  const connected = client
  return {
    protocol: 'a2a',
    protocolVersion: connected.protocolVersion,
    async call(task, args, call = {}) {
      try {
        const result = await withTimeout(
          call.timeoutMs ?? options.timeoutMs,
          task,
          (signal) =>
            connected.sendMessage(
              {
                tenant: '',
                message: {
                  messageId: crypto.randomUUID(),
                  contextId: '',
                  taskId: '',
                  role: Role.ROLE_USER,
                  parts: [dataPart(a2aInvocationData(task, args, connected.protocolVersion))],
                  metadata: undefined,
                  extensions: [],
                  referenceTaskIds: [],
                },
                configuration: undefined,
                metadata: undefined,
              },
              { signal, serviceParameters: ServiceParameters.create(withA2AExtensions(ADCP_A2A_EXTENSION)) },
            ),
          call.signal,
        )
        if (!('status' in result)) {
          return { protocol: 'a2a', body: lastDataPart(result.parts), transportError: false, raw: result }
        }
        const a2aTask = result as Task
        const body =
          lastDataPart(a2aTask.artifacts.flatMap((artifact) => artifact.parts)) ??
          lastDataPart(a2aTask.status?.message?.parts)
        const state = String(a2aTask.status?.state ?? '')
        return {
          protocol: 'a2a',
          body,
          transportError: /FAILED|REJECTED/i.test(state),
          taskState: state,
          raw: a2aTask,
        }
      } catch (error) {
        return failure('a2a', error)
      }
    },
    async describe() {
      const card = await connected.getAgentCard()
      return {
        name: card.name,
        ...(card.description ? { description: card.description } : {}),
        tasks: card.skills.map((skill) => ({
          name: skill.id,
          ...(skill.description ? { description: skill.description } : {}),
        })),
      }
    },
    close: async () => {},
  }
}

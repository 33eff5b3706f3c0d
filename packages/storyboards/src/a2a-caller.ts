/** The A2A side of the runner's transport: the official `@a2a-js/sdk` client (JSON-RPC), AdCP extension on. */
import { Role, type Part, type Task } from '@a2a-js/sdk'
import {
  ClientFactory,
  ClientFactoryOptions,
  DefaultAgentCardResolver,
  JsonRpcTransportFactory,
  ServiceParameters,
  withA2AExtensions,
} from '@a2a-js/sdk/client'
import { createRunnerFetch } from './http.js'
import {
  ADCP_A2A_EXTENSION,
  failure,
  isRecord,
  withTimeout,
  type CallerOptions,
  type TaskCaller,
} from './transport.js'

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
 * The AdCP invocation DataPart of a task: `{skill, input}`, and to an A2A 0.3 agent `parameters` too, the name
 * agents written to earlier 3.x rules read (an agent on the 3.1 profile takes `input` when both are present).
 *
 * @example a2aInvocation(client.protocolVersion, 'get_products', { brief: 'outdoor' })
 */
export function a2aInvocation(
  protocolVersion: string,
  skill: string,
  args: Record<string, unknown>,
): Record<string, unknown> {
  return protocolVersion.startsWith('0.') ? { skill, input: args, parameters: args } : { skill, input: args }
}

/**
 * Connects the official A2A client to the agent, activating the AdCP extension on every message.
 * @example const caller = await a2aCaller('http://127.0.0.1:4200', { maxResponseBytes: 1 << 22, connectTimeoutMs: 5000 })
 */
export async function a2aCaller(agentUrl: string, options: CallerOptions): Promise<TaskCaller> {
  const http = createRunnerFetch({
    ...options,
    agentUrl,
    credentials: options.credentials ?? { type: 'none' },
  })
  const factory = new ClientFactory(
    ClientFactoryOptions.createFrom(ClientFactoryOptions.default, {
      // legacyCompat: an agent whose card offers only A2A 0.3 (agents written to earlier 3.x rules) is spoken
      // to in 0.3; a card offering 1.0 gets 1.0.
      transports: [new JsonRpcTransportFactory({ fetchImpl: http.fetch, legacyCompat: { enabled: true } })],
      // The card is fetched through the runner's fetch too: credentials, size cap, redirect policy, routing.
      cardResolver: new DefaultAgentCardResolver({ fetchImpl: http.fetch, legacyCompat: { enabled: true } }),
    }),
  )
  const client = await withTimeout(options.connectTimeoutMs, `reading ${agentUrl}'s agent card`, () =>
    factory.createFromUrl(agentUrl),
  )
  return {
    protocol: 'a2a',
    async call(task, args, timeoutMs) {
      http.reset()
      try {
        const result = await withTimeout(timeoutMs, task, (signal) =>
          client.sendMessage(
            {
              tenant: '',
              message: {
                messageId: crypto.randomUUID(),
                contextId: '',
                taskId: '',
                role: Role.ROLE_USER,
                parts: [dataPart(a2aInvocation(client.protocolVersion, task, args))],
                metadata: undefined,
                extensions: [],
                referenceTaskIds: [],
              },
              configuration: undefined,
              metadata: undefined,
            },
            { signal, serviceParameters: ServiceParameters.create(withA2AExtensions(ADCP_A2A_EXTENSION)) },
          ),
        )
        const observed = http.last()
        const extra = observed ? { http: observed } : {}
        if (!('status' in result)) {
          return {
            transport: 'a2a',
            body: lastDataPart(result.parts),
            transportError: false,
            ...extra,
            raw: result,
          }
        }
        const a2aTask = result as Task
        const body =
          lastDataPart(a2aTask.artifacts.flatMap((artifact) => artifact.parts)) ??
          lastDataPart(a2aTask.status?.message?.parts)
        const state = String(a2aTask.status?.state ?? '')
        return {
          transport: 'a2a',
          body,
          transportError: /FAILED|REJECTED/i.test(state),
          ...extra,
          raw: a2aTask,
        }
      } catch (error) {
        return failure('a2a', error, http.last())
      }
    },
    async tasks() {
      const card = await client.getAgentCard()
      return card.skills.map((skill) => skill.id)
    },
    close: async () => {},
  }
}

/**
 * The AdCP invocation over A2A by hand (a2a-profile-extension: exactly one `{skill, input}` DataPart, the AdCP
 * extension activated): the DataPart itself, the one builder of a raw JSON-RPC message send for tests and
 * clients that must send crafted requests, and the reading of the AdCP response out of the answer.
 */
import { ADCP_A2A_EXTENSION } from './extension.js'
import { isRecord } from './result.js'

/** The A2A protocol versions spoken. */
export type A2AVersion = '1.0' | '0.3'

/**
 * The AdCP invocation DataPart of a task: `{skill, input}`, and to an A2A 0.3 agent `parameters` too, the name
 * agents written to earlier 3.x rules read (an agent on the 3.1 profile takes `input` when both are present).
 *
 * @example a2aInvocationData('get_products', { brief: 'outdoor' }, client.protocolVersion)
 */
export function a2aInvocationData(
  skill: string,
  input: Readonly<Record<string, unknown>>,
  protocolVersion: string = '1.0',
): Record<string, unknown> {
  return protocolVersion.startsWith('0.') ? { skill, input, parameters: input } : { skill, input }
}

/** Options of {@link a2aSendRequest}. */
export interface A2ASendRequestOptions {
  /** The AdCP task name (the A2A skill id). */
  readonly skill: string
  readonly input: Readonly<Record<string, unknown>>
  /** `1.0` (default): `SendMessage`; `0.3`: `message/send` with `kind`-tagged parts. */
  readonly version?: A2AVersion
  /** `params.configuration` (push notification config, …), sent as given. */
  readonly configuration?: Readonly<Record<string, unknown>>
  /** The JSON-RPC id. Default 1. */
  readonly id?: string | number
}

/**
 * The headers and JSON-RPC body of one raw A2A message send invoking an AdCP task.
 *
 * @example
 * const { headers, body } = a2aSendRequest({ skill: 'list_creative_formats', input: { type: 'display' } })
 * const answer = await fetch('https://creative.example/a2a', { method: 'POST', headers, body: JSON.stringify(body) })
 * const formats = a2aResponseData(await answer.json())
 */
export function a2aSendRequest(options: A2ASendRequestOptions): {
  headers: Record<string, string>
  body: Record<string, unknown>
} {
  const version = options.version ?? '1.0'
  const invocation = { skill: options.skill, input: options.input }
  const message =
    version === '1.0'
      ? { messageId: crypto.randomUUID(), role: 'ROLE_USER', parts: [{ data: invocation }] }
      : {
          kind: 'message',
          messageId: crypto.randomUUID(),
          role: 'user',
          parts: [{ kind: 'data', data: invocation }],
        }
  return {
    headers: {
      'content-type': 'application/json',
      accept: 'application/json',
      'a2a-version': version,
      'a2a-extensions': ADCP_A2A_EXTENSION,
    },
    body: {
      jsonrpc: '2.0',
      id: options.id ?? 1,
      method: version === '1.0' ? 'SendMessage' : 'message/send',
      params: { message, ...(options.configuration ? { configuration: options.configuration } : {}) },
    },
  }
}

/**
 * The AdCP response in a raw A2A JSON-RPC answer: the first DataPart of the task's artifacts (A2A 1.0
 * `result.task`, 0.3 `result`). Throws when the answer is a JSON-RPC error or carries no DataPart.
 *
 * @example
 * a2aResponseData({ jsonrpc: '2.0', id: 1, result: { task: { artifacts: [{ parts: [{ data: { formats: [] } }] }] } } })
 * // { formats: [] }
 */
export function a2aResponseData(answer: unknown): Record<string, unknown> {
  if (!isRecord(answer)) throw new Error('the answer is not a JSON-RPC response')
  if (isRecord(answer.error)) {
    throw new Error(`JSON-RPC error ${String(answer.error.code)}: ${String(answer.error.message)}`)
  }
  const result = isRecord(answer.result) ? answer.result : undefined
  const task = result && isRecord(result.task) ? result.task : result
  const artifacts = task && Array.isArray(task.artifacts) ? (task.artifacts as unknown[]) : []
  for (const artifact of artifacts) {
    const parts = isRecord(artifact) && Array.isArray(artifact.parts) ? (artifact.parts as unknown[]) : []
    for (const part of parts) if (isRecord(part) && isRecord(part.data)) return part.data
  }
  throw new Error('the A2A task carries no data part')
}

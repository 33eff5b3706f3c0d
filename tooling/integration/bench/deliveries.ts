/**
 * The deliveries the service benches send: unique MCP `working` statuses, each signed once (its own nonce) and
 * serialised before the clock starts, and the load that sends them expecting 200 `accepted` for each.
 */
import { signWebhook, type AdcpJwk, type SignedMessage } from '@adwire/http-signatures'
import { prepare, runLoad, type LoadResult } from './load.js'

/** `count` unique deliveries to `url`, each signed once with `key`, ready to send. */
export async function presign(url: string, count: number, key: AdcpJwk): Promise<SignedMessage[]> {
  const out: SignedMessage[] = []
  const timestamp = new Date().toISOString()
  for (let index = 0; index < count; index += 1) {
    const body = JSON.stringify({
      idempotency_key: `whk_${crypto.randomUUID()}`,
      operation_id: `op_bench_${index % 50}`,
      task_id: `task_${crypto.randomUUID()}`,
      task_type: 'create_media_buy',
      status: 'working',
      timestamp,
      result: { percentage: index % 100, current_step: 'matching_inventory' },
    })
    out.push(
      await signWebhook(
        { method: 'POST', url, headers: { 'content-type': 'application/json' }, body },
        { key },
      ),
    )
  }
  return out
}

/**
 * Sends every message once, `inFlight` at a time, over the lean load generator (raw keep-alive sockets,
 * requests serialised before the clock starts), and checks that each answer is 200 `accepted`.
 */
export async function loadAccepted(
  messages: readonly SignedMessage[],
  inFlight: number,
): Promise<LoadResult> {
  const prepared = messages.map((message) =>
    prepare({
      url: message.url,
      headers: message.headers as Record<string, string>,
      body: message.body as string,
    }),
  )
  return runLoad(prepared, inFlight, (answer) =>
    answer.status === 200 && answer.body.includes('"accepted"')
      ? undefined
      : `a delivery was not accepted: ${answer.status} ${answer.body}`,
  )
}

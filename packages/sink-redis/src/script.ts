import { createHash } from 'node:crypto'

/**
 * The idempotent XADD, one Lua script so Redis runs it atomically: when the event's dedupe key is absent it
 * appends the entry (`id`, `body`, `headers` fields, trimmed to about MAXLEN when one is set) and then sets the
 * dedupe key with its expiry; when present it appends nothing. It replies with the new entry id, or nil for a
 * duplicate. Redis 7 has no idempotent XADD of its own.
 *
 * The XADD comes before the SET: a script that fails halfway keeps what it already wrote, so a failing XADD
 * (the key holds another type, no memory) must leave no dedupe key behind, which would drop the event's every
 * repeat. Once the XADD succeeded, the SET cannot fail (a script that wrote goes on writing whatever the memory).
 *
 * KEYS[1] the stream, KEYS[2] the dedupe key; ARGV: id, body, headers (JSON), dedupe seconds, MAXLEN (0: none).
 */
export const IDEMPOTENT_XADD = `
if redis.call('EXISTS', KEYS[2]) == 1 then
  return false
end
local entry
if tonumber(ARGV[5]) > 0 then
  entry = redis.call('XADD', KEYS[1], 'MAXLEN', '~', ARGV[5], '*', 'id', ARGV[1], 'body', ARGV[2], 'headers', ARGV[3])
else
  entry = redis.call('XADD', KEYS[1], '*', 'id', ARGV[1], 'body', ARGV[2], 'headers', ARGV[3])
end
redis.call('SET', KEYS[2], '1', 'EX', ARGV[4])
return entry
`

/** The script's SHA-1, for EVALSHA. */
export const IDEMPOTENT_XADD_SHA = createHash('sha1').update(IDEMPOTENT_XADD).digest('hex')

/**
 * The key that records an event id as published: `<stream>:dedupe:<id>`. A stream name with a hash tag
 * (`{adcp}:webhooks`) puts both keys in one slot.
 *
 * @example
 * dedupeKey('adcp:webhooks', 'q3v…') // 'adcp:webhooks:dedupe:q3v…'
 */
export function dedupeKey(stream: string, id: string): string {
  return `${stream}:dedupe:${id}`
}

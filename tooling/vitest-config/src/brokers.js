/**
 * Where the broker suites find their brokers (RabbitMQ, Redis, NATS with JetStream), as the PostgreSQL suites
 * find their server: the URL from the environment, else the development machine's default on 127.0.0.1.
 *
 * - Reachable: the suite runs.
 * - Unreachable on a developer machine: the suite is skipped with a message saying why.
 * - Unreachable in CI (`CI=true`): the suite fails; a CI run never passes by skipping them.
 */
import { connect } from 'node:net'

const isCI = () => process.env.CI === 'true' || process.env.CI === '1'

/** @type {Record<'rabbitmq' | 'redis' | 'nats', { env: string, url: string }>} */
export const BROKERS = {
  rabbitmq: { env: 'ADWIRE_TEST_AMQP_URL', url: 'amqp://guest:guest@127.0.0.1:5672/' },
  redis: { env: 'ADWIRE_TEST_REDIS_URL', url: 'redis://127.0.0.1:6379/0' },
  nats: { env: 'ADWIRE_TEST_NATS_URL', url: 'nats://127.0.0.1:4222' },
}

/**
 * Whether a TCP connection to host:port opens within `timeoutMs`.
 * @param {string} host
 * @param {number} port
 * @param {number} timeoutMs
 * @returns {Promise<boolean>}
 */
function answers(host, port, timeoutMs) {
  return new Promise((resolve) => {
    const socket = connect({ host, port })
    const done = (/** @type {boolean} */ ok) => {
      socket.destroy()
      resolve(ok)
    }
    socket.setTimeout(timeoutMs, () => done(false))
    socket.once('connect', () => done(true))
    socket.once('error', () => done(false))
  })
}

/**
 * Resolves to the broker's URL when it answers, or `undefined` when the suite should skip. Throws in CI when
 * the broker cannot be reached.
 *
 * @example
 * const url = await resolveTestBroker('rabbitmq')
 * describe.skipIf(!url)('the RabbitMQ sink', () => { … })
 * @param {'rabbitmq' | 'redis' | 'nats'} kind
 * @returns {Promise<string | undefined>}
 */
export async function resolveTestBroker(kind) {
  const broker = BROKERS[kind]
  const url = process.env[broker.env] || broker.url
  const parsed = new URL(url)
  const port = Number(parsed.port || { rabbitmq: 5672, redis: 6379, nats: 4222 }[kind])
  if (await answers(parsed.hostname, port, 3000)) return url
  const why = `${kind} at ${parsed.hostname}:${port} does not answer (set ${broker.env} to use another)`
  if (isCI()) throw new Error(`${why}; in CI the broker suites must run`)
  console.warn(`${kind} suites skipped: ${why}`)
  return undefined
}

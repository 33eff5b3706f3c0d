/**
 * Where PostgreSQL suites find their server. `ADWIRE_TEST_POSTGRES_URL` names it; `.ci/run` exports it.
 *
 * - Set and reachable: the suite runs.
 * - Unset or unreachable on a developer machine: the suite is skipped with a message saying why.
 * - Unset or unreachable in CI (`CI=true`): the suite fails; a CI run never passes by skipping them.
 */
import pg from 'pg'

const isCI = () => process.env.CI === 'true' || process.env.CI === '1'

/**
 * Resolves to the connection string when the server answers, or `undefined` when the suite should skip.
 * Throws in CI when the server cannot be used.
 * @returns {Promise<string | undefined>}
 */
export async function resolveTestPostgresUrl() {
  const url = process.env.ADWIRE_TEST_POSTGRES_URL
  if (!url) {
    if (isCI()) throw new Error('ADWIRE_TEST_POSTGRES_URL is not set; in CI the PostgreSQL suites must run')
    console.warn(
      'PostgreSQL suites skipped: set ADWIRE_TEST_POSTGRES_URL (e.g. postgres://postgres@127.0.0.1:5432/test)',
    )
    return undefined
  }
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 3000 })
  try {
    await client.connect()
    await client.query('select 1')
    return url
  } catch (error) {
    if (isCI())
      throw new Error(`PostgreSQL at ${redact(url)} is unreachable: ${String(error)}`, { cause: error })
    console.warn(`PostgreSQL suites skipped: ${redact(url)} is unreachable (${String(error)})`)
    return undefined
  } finally {
    await client.end().catch(() => {})
  }
}

/** @param {string} url */
function redact(url) {
  try {
    const parsed = new URL(url)
    if (parsed.password) parsed.password = '***'
    return parsed.toString()
  } catch {
    return '<invalid url>'
  }
}

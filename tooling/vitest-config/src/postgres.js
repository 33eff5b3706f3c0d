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

/**
 * A schema name no other run uses: `<prefix>_<16 hex digits>`.
 * @param {string} [prefix]
 * @returns {string}
 */
export function freshSchemaName(prefix = 'adwire_test') {
  return `${prefix}_${crypto.randomUUID().replaceAll('-', '').slice(0, 16)}`
}

/**
 * Runs one query on a short-lived connection of its own (never a pool the code under test uses).
 * @template {pg.QueryResultRow} Row
 * @param {string} url
 * @param {string} text
 * @param {unknown[]} [values]
 * @returns {Promise<Row[]>}
 */
export async function queryOnce(url, text, values = []) {
  const client = new pg.Client({ connectionString: url })
  await client.connect()
  try {
    return (await client.query(text, values)).rows
  } finally {
    await client.end()
  }
}

/**
 * Drops `schema` and everything in it (a test's own schema, after the test).
 * @param {string} url
 * @param {string} schema
 * @returns {Promise<void>}
 */
export async function dropSchema(url, schema) {
  await queryOnce(url, `DROP SCHEMA IF EXISTS "${schema}" CASCADE`)
}

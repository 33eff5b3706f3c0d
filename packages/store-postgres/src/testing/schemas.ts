/**
 * Helpers for this package's tests (not exported): a fresh schema per test file, dropped afterwards.
 */
import pg from 'pg'

/** `adwire_test_<random>`: a schema no other run uses. */
export const freshSchemaName = () => `adwire_test_${crypto.randomUUID().replaceAll('-', '').slice(0, 16)}`

/** Drops `schema` and everything in it. */
export async function dropSchema(url: string, schema: string): Promise<void> {
  const client = new pg.Client({ connectionString: url })
  await client.connect()
  try {
    await client.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`)
  } finally {
    await client.end()
  }
}

/** Runs one query on a short-lived connection. */
export async function queryOnce<Row extends pg.QueryResultRow>(
  url: string,
  text: string,
  values: unknown[] = [],
): Promise<Row[]> {
  const client = new pg.Client({ connectionString: url })
  await client.connect()
  try {
    return (await client.query<Row>(text, values)).rows
  } finally {
    await client.end()
  }
}

import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describeStoreContract } from '@adwire/store-contract'
import { afterAll } from 'vitest'
import { openSqliteStores } from './index.js'

const directory = mkdtempSync(join(tmpdir(), 'adwire-store-sqlite-contract-'))
afterAll(() => rmSync(directory, { recursive: true, force: true }))

describeStoreContract('sqlite', ['claims', 'convergence', 'outbox', 'replay', 'inbox'], async () => {
  const path = join(directory, 'contract.db')
  const stores = openSqliteStores({ path })
  // A second connection on the same file, as another process would have.
  const peer = openSqliteStores({ path })
  // The inbox's writer stores rows in a table of the same file, as the reference receiver does.
  const database = stores.database
  database.exec(
    `CREATE TABLE contract_events (scope TEXT NOT NULL, key TEXT NOT NULL, reemission INTEGER NOT NULL)`,
  )
  const insert = database.prepare('INSERT INTO contract_events (scope, key, reemission) VALUES (?, ?, ?)')
  const select = database
    .prepare<[string, number], string>(
      'SELECT key FROM contract_events WHERE scope = ? AND reemission >= ? ORDER BY key',
    )
    .pluck()
  const rows = database.prepare<[number, string], { stored: number; live: number }>(
    'SELECT count(*) AS stored, count(*) FILTER (WHERE expires_at > ?) AS live FROM replay_nonces WHERE keyid = ?',
  )
  return {
    ...stores,
    peer,
    async replayRows(keyid, now) {
      return rows.get(now, keyid)!
    },
    async openInbox(fail) {
      return {
        inbox: stores.createInbox({
          write(event) {
            insert.run(event.sender, event.idempotencyKey, event.reemission ? 1 : 0)
            if (fail(event)) throw new Error('the writer failed')
          },
        }),
        published: async (scope) => select.all(scope, 0),
        reemitted: async (scope) => select.all(scope, 1),
      }
    },
    close: async () => {
      stores.close()
      peer.close()
    },
  }
})

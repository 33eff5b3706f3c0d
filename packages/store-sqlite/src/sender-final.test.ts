/**
 * The sender's end-of-buy firing rules on SQLite files: two senders on one file (two connections, as two
 * processes) and a sender restarted on the same file.
 */
import { randomUUID } from 'node:crypto'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describeSenderFinalRules } from '@adwire/store-contract'
import { afterAll } from 'vitest'
import { openSqliteStores } from './index.js'

const directory = mkdtempSync(join(tmpdir(), 'adwire-store-sqlite-sender-'))
afterAll(() => rmSync(directory, { recursive: true, force: true }))

describeSenderFinalRules('sqlite', async () => {
  const path = join(directory, `${randomUUID()}.db`)
  let stores = openSqliteStores({ path })
  const peer = openSqliteStores({ path })
  return {
    outbox: stores.outbox,
    peer: peer.outbox,
    restart: async () => {
      stores.close()
      peer.close()
      stores = openSqliteStores({ path })
      return stores.outbox
    },
    close: async () => {
      stores.close()
      peer.close()
    },
  }
})

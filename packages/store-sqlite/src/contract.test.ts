import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describeStoreContract } from '@adwire/store-contract'
import { afterAll } from 'vitest'
import { openSqliteStores } from './index.js'

const directory = mkdtempSync(join(tmpdir(), 'adwire-store-sqlite-contract-'))
afterAll(() => rmSync(directory, { recursive: true, force: true }))

describeStoreContract('sqlite', ['claims', 'convergence', 'outbox', 'replay'], async () => {
  const path = join(directory, 'contract.db')
  const stores = openSqliteStores({ path })
  // A second connection on the same file, as another process would have.
  const peer = openSqliteStores({ path })
  return {
    ...stores,
    peer,
    close: async () => {
      stores.close()
      peer.close()
    },
  }
})

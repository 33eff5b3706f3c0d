/**
 * The durable ceiling the receiver service bench compares against (bench/receiver-service.bench.ts): the
 * thread-pool ceiling of bench/ceiling-entry.ts (read the body, check one Ed25519 signature off the event loop)
 * plus the least a durable receiver writes for a delivery, on SQLite as the service keeps it (WAL, group commit
 * of the deliveries verified in one turn, committed under synchronous=NORMAL and acknowledged after an
 * fdatasync of the WAL on the thread pool): the nonce (read from Signature-Input), a claim and the event (its
 * key read by parsing the body), each a row under a unique key. No header checks, no envelope, no decisions:
 * what remains between the receiver and this row is the cost of doing those right.
 */
import { verify } from 'node:crypto'
import { open, type FileHandle } from 'node:fs/promises'
import { createServer, type ServerResponse } from 'node:http'
import { openSqliteStores } from '@adwire/store-sqlite'
import { ACCEPTED, base, publicKey, signature } from './ceiling-signature.js'

const path = process.env.DURABLE_CEILING_DB
if (!path) throw new Error('DURABLE_CEILING_DB names the SQLite file')
// A better-sqlite3 connection opened as the stores open theirs (WAL); its own tables below, unused store tables.
const db = openSqliteStores({ path, synchronous: 'normal' }).database
db.exec(`
  CREATE TABLE IF NOT EXISTS ceiling_nonces (keyid TEXT NOT NULL, nonce TEXT NOT NULL, expires_at REAL NOT NULL,
    PRIMARY KEY (keyid, nonce)) WITHOUT ROWID;
  CREATE INDEX IF NOT EXISTS ceiling_nonces_expiry ON ceiling_nonces (expires_at);
  CREATE TABLE IF NOT EXISTS ceiling_claims (scope TEXT NOT NULL, key TEXT NOT NULL, expires_at REAL NOT NULL,
    PRIMARY KEY (scope, key)) WITHOUT ROWID;
  CREATE INDEX IF NOT EXISTS ceiling_claims_expiry ON ceiling_claims (expires_at);
  CREATE TABLE IF NOT EXISTS ceiling_events (seq INTEGER PRIMARY KEY, registration_id TEXT NOT NULL,
    idempotency_key TEXT NOT NULL, received_at REAL NOT NULL, payload TEXT NOT NULL,
    UNIQUE (registration_id, idempotency_key));
`)
const insertNonce = db.prepare('INSERT INTO ceiling_nonces VALUES (?, ?, ?)')
const insertClaim = db.prepare('INSERT INTO ceiling_claims VALUES (?, ?, ?)')
const insertEvent = db.prepare(
  'INSERT INTO ceiling_events (registration_id, idempotency_key, received_at, payload) VALUES (?, ?, ?, ?)',
)
const begin = db.prepare('BEGIN IMMEDIATE')
const commit = db.prepare('COMMIT')
const NONCE = /;nonce="([^"]+)"/

interface Verified {
  readonly nonce: string
  readonly key: string
  readonly body: string
  readonly response: ServerResponse
}
let group: Verified[] = []
let scheduled = false
let wal: Promise<FileHandle> | undefined
let syncing = false
const unsynced: ServerResponse[] = []

function answer(response: ServerResponse, status = 200, body = ACCEPTED) {
  response.writeHead(status, { 'content-type': 'application/json', 'content-length': body.length })
  response.end(body)
}

async function sync() {
  syncing = true
  while (unsynced.length > 0) {
    const batch = unsynced.splice(0)
    wal ??= open(`${path}-wal`, 'r')
    await (await wal).datasync()
    for (const response of batch) answer(response)
  }
  syncing = false
}

function flush() {
  scheduled = false
  const deliveries = group
  group = []
  const now = Date.now() / 1000
  begin.run()
  for (const delivery of deliveries) {
    insertNonce.run('bench-service', delivery.nonce, now + 420)
    insertClaim.run('seller', delivery.key, now + 86_400)
    insertEvent.run('registration', delivery.key, now, delivery.body)
  }
  commit.run()
  for (const delivery of deliveries) unsynced.push(delivery.response)
  if (!syncing) void sync()
}

const server = createServer((request, response) => {
  // The spawner's health probe.
  if (request.method !== 'POST') return answer(response)
  const chunks: Buffer[] = []
  request.on('data', (chunk: Buffer) => chunks.push(chunk))
  request.on('end', () => {
    const body = Buffer.concat(chunks).toString()
    const nonce = NONCE.exec(String(request.headers['signature-input']))?.[1]
    if (!nonce) return answer(response, 401, '{"error":"no nonce"}')
    verify(null, base, publicKey, signature, (error, valid) => {
      if (error || !valid) return answer(response, 401, '{"error":"bad"}')
      const key = (JSON.parse(body) as { idempotency_key: string }).idempotency_key
      group.push({ nonce, key, body, response })
      if (!scheduled) {
        scheduled = true
        setImmediate(flush)
      }
    })
  })
})
server.listen(Number(process.env.PORT ?? 0), process.env.HOST ?? '127.0.0.1', () => {
  const address = server.address() as import('node:net').AddressInfo
  console.log(`listening on http://127.0.0.1:${address.port}`)
})
process.once('SIGTERM', () => server.close(() => process.exit(0)))

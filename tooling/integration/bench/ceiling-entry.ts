/**
 * The ceiling the receiver service bench compares against (bench/receiver-service.bench.ts): a node:http
 * server that, for each POST, reads the body, checks one Ed25519 signature of a fixed signature base (the bare
 * primitive of the bench, with its own key) and answers 200 `accepted`. No header parsing, no JSON, no store:
 * the least any verifying receiver does, on the same HTTP path and the same load generator.
 * CEILING_VERIFY=inline checks on the event loop; `pool` on the libuv thread pool (both cores).
 */
import { verify } from 'node:crypto'
import { createServer } from 'node:http'
import { ACCEPTED, base, publicKey, signature } from './ceiling-signature.js'

const pool = process.env.CEILING_VERIFY === 'pool'

function answer(response: import('node:http').ServerResponse, valid: boolean) {
  const body = valid ? ACCEPTED : '{"error":"bad"}'
  response.writeHead(valid ? 200 : 401, { 'content-type': 'application/json', 'content-length': body.length })
  response.end(body)
}

const server = createServer((request, response) => {
  const chunks: Buffer[] = []
  request.on('data', (chunk: Buffer) => chunks.push(chunk))
  request.on('end', () => {
    Buffer.concat(chunks)
    if (pool) verify(null, base, publicKey, signature, (error, valid) => answer(response, !error && valid))
    else answer(response, verify(null, base, publicKey, signature))
  })
})
server.listen(Number(process.env.PORT ?? 0), process.env.HOST ?? '127.0.0.1', () => {
  const address = server.address() as import('node:net').AddressInfo
  console.log(`listening on http://127.0.0.1:${address.port}`)
})
process.once('SIGTERM', () => server.close(() => process.exit(0)))

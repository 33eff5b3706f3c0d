/**
 * The reference receiver service publishing with claim → publish → complete (each step its own commit)
 * instead of its transactional inbox: the bench's comparison rows.
 * Usage: node --import tsx receiver-claims-entry.ts  (env as for the receiver)
 */
import { parseEnv, startReceiver } from '@adwire/app-receiver'

const receiver = await startReceiver(parseEnv(process.env), { publication: 'claims' })
process.stdout.write(`receiver: listening on ${receiver.url}\n`)
process.once('SIGTERM', () => void receiver.close().then(() => process.exit(0)))

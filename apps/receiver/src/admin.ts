/**
 * The admin token that guards the API and the page's data. Set by ADMIN_TOKEN, or generated at the first
 * start, printed once, and kept in the database as its SHA-256 (every instance on the database accepts it;
 * the database never holds the token itself). Stream tickets let an EventSource, which cannot send an
 * Authorization header, open the stream without putting the token in a URL.
 */
import { createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto'
import type { ReceiverDatabase } from './db/types.js'

const SETTING = 'admin_token_sha256'
/** How long a stream ticket opens the stream (EventSource reconnects with the same URL meanwhile). */
export const TICKET_SECONDS = 3600

export interface AdminAuth {
  /** Checks an `Authorization` header: `missing` (absent or not Bearer), `invalid` (wrong token) or `ok`. */
  check(authorization: string | undefined): 'ok' | 'missing' | 'invalid'
  /** A ticket for `GET /api/stream?ticket=…`, valid for {@link TICKET_SECONDS}. */
  issueTicket(now: number): { ticket: string; expiresAt: number }
  checkTicket(ticket: string, now: number): boolean
}

export interface ResolvedAdmin {
  readonly auth: AdminAuth
  /** The token, when this start generated it (print it once); undefined otherwise. */
  readonly generated?: string
  /** Where the token came from. */
  readonly source: 'env' | 'database' | 'generated'
}

const sha256 = (text: string) => createHash('sha256').update(text, 'utf8').digest()

/**
 * Resolves the admin token: `envToken` when given; else the hash stored in the database; else a new random
 * token (32 bytes, base64url) whose hash is stored, unless another instance stored one first.
 *
 * @example
 * const { auth, generated } = await resolveAdminToken(db, process.env.ADMIN_TOKEN)
 * if (generated) console.log(`ADMIN_TOKEN=${generated}`)
 */
export async function resolveAdminToken(db: ReceiverDatabase, envToken?: string): Promise<ResolvedAdmin> {
  if (envToken) return { auth: adminAuth(sha256(envToken)), source: 'env' }
  const stored = await db.getSetting(SETTING)
  if (stored) return { auth: adminAuth(Buffer.from(stored, 'hex')), source: 'database' }
  const token = `adw_${randomBytes(32).toString('base64url')}`
  const hash = sha256(token).toString('hex')
  const winner = await db.putSettingIfAbsent(SETTING, hash)
  if (winner !== hash) return { auth: adminAuth(Buffer.from(winner, 'hex')), source: 'database' }
  return { auth: adminAuth(Buffer.from(hash, 'hex')), generated: token, source: 'generated' }
}

/** An {@link AdminAuth} over the SHA-256 of the token. */
export function adminAuth(tokenHash: Buffer): AdminAuth {
  const sign = (expiresAt: number) =>
    createHmac('sha256', tokenHash).update(`adwire-receiver-stream:${expiresAt}`).digest('base64url')
  return {
    check(authorization) {
      const match = /^Bearer +(\S+) *$/i.exec(authorization ?? '')
      if (!match) return 'missing'
      return timingSafeEqual(sha256(match[1]!), tokenHash) ? 'ok' : 'invalid'
    },
    issueTicket(now) {
      const expiresAt = Math.floor(now) + TICKET_SECONDS
      return { ticket: `${expiresAt}.${sign(expiresAt)}`, expiresAt }
    },
    checkTicket(ticket, now) {
      const match = /^(\d{1,12})\.([A-Za-z0-9_-]{43})$/.exec(ticket)
      if (!match) return false
      const expiresAt = Number(match[1])
      if (expiresAt <= now || expiresAt > now + TICKET_SECONDS + 60) return false
      return timingSafeEqual(Buffer.from(match[2]!), Buffer.from(sign(expiresAt)))
    },
  }
}

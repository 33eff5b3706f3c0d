/**
 * The admin token that guards the API and the page's data. Set by ADMIN_TOKEN, or generated at the first
 * start, printed once, and kept in the database as its SHA-256 (every instance on the database accepts it;
 * the database never holds the token itself). Stream tickets let an EventSource, which cannot send an
 * Authorization header, open the stream without putting the token in a URL. Tickets are MACed with a key the
 * database cannot give away: derived from STREAM_TICKET_SECRET, else from the token itself when this process
 * knows it (ADMIN_TOKEN, or generated now), else from a random secret of this process.
 */
import { createHash, createHmac, hkdfSync, randomBytes, timingSafeEqual } from 'node:crypto'
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
  /**
   * What stream tickets are MACed with: `secret` (STREAM_TICKET_SECRET: every instance with it accepts them),
   * `token` (the admin token, never stored: every instance given ADMIN_TOKEN accepts them) or `process` (a
   * random key: only this process accepts them, until it restarts; the page then asks for a new one).
   */
  readonly ticketKey: 'secret' | 'token' | 'process'
}

const sha256 = (text: string) => createHash('sha256').update(text, 'utf8').digest()

/**
 * The stream-ticket MAC key from a secret: HKDF-SHA256 with its own label, so it is neither the secret nor the
 * SHA-256 of the token that the database keeps.
 */
export const ticketKeyFrom = (secret: string | Buffer): Buffer =>
  Buffer.from(hkdfSync('sha256', secret, 'adwire-receiver', 'stream-ticket-mac-v1', 32))

/**
 * Resolves the admin token: `envToken` when given; else the hash stored in the database; else a new random
 * token (32 bytes, base64url) whose hash is stored, unless another instance stored one first. The ticket key
 * comes from `ticketSecret`, else the token when known here, else a random per-process secret.
 *
 * @example
 * const { auth, generated } = await resolveAdminToken(db, process.env.ADMIN_TOKEN)
 * if (generated) console.log(`ADMIN_TOKEN=${generated}`)
 */
export async function resolveAdminToken(
  db: ReceiverDatabase,
  envToken?: string,
  ticketSecret?: string,
): Promise<ResolvedAdmin> {
  const keyed = (tokenHash: Buffer, token: string | undefined) => {
    const ticketKey = ticketSecret ? 'secret' : token ? 'token' : 'process'
    const key = ticketKeyFrom(ticketSecret ?? token ?? randomBytes(32))
    return { auth: adminAuth(tokenHash, key), ticketKey } as const
  }
  if (envToken) return { ...keyed(sha256(envToken), envToken), source: 'env' }
  const stored = await db.getSetting(SETTING)
  if (stored) return { ...keyed(Buffer.from(stored, 'hex'), undefined), source: 'database' }
  const token = `adw_${randomBytes(32).toString('base64url')}`
  const hash = sha256(token).toString('hex')
  const winner = await db.putSettingIfAbsent(SETTING, hash)
  if (winner !== hash) return { ...keyed(Buffer.from(winner, 'hex'), undefined), source: 'database' }
  return { ...keyed(Buffer.from(hash, 'hex'), token), generated: token, source: 'generated' }
}

/** An {@link AdminAuth} over the SHA-256 of the token, with tickets MACed under `ticketKey`. */
export function adminAuth(tokenHash: Buffer, ticketKey: Buffer): AdminAuth {
  const sign = (expiresAt: number) =>
    createHmac('sha256', ticketKey).update(`adwire-receiver-stream:${expiresAt}`).digest('base64url')
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

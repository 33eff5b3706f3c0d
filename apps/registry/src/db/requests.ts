/** Crawl requests, stored check reports and the registry's counts. */
import type { CrawlRequest } from '../domain/types.js'
import { leaseQueue, type Fence, type LeaseQueueSpec, type SqlDriver } from '@adwire/sql'

export interface RegistryCounts {
  brands: number
  publishers: number
  publishers_with_valid_adagents: number
  properties: number
  authorizations: number
  agents: number
  member_agents: number
  feed_events: number
}

export interface RequestStore {
  createCrawlRequest(request: CrawlRequest): Promise<void>
  getCrawlRequest(id: string): Promise<CrawlRequest | undefined>
  updateCrawlRequest(id: string, changes: Partial<Omit<CrawlRequest, 'id' | 'domain'>>): Promise<void>
  /** The oldest request still to run (`queued`, or `retrying` whose time has come), if any. */
  nextCrawlRequest(nowIso: string): Promise<CrawlRequest | undefined>
  /**
   * Claims the oldest request still to run until `leaseUntilIso` (`running`, its attempt counted, first and last
   * attempt times set); with the fence that proves the lease.
   */
  claimCrawlRequest(
    nowIso: string,
    leaseUntilIso: string,
  ): Promise<{ request: CrawlRequest; fence: Fence } | undefined>
  /** Ends a claimed request in `status` with `changes`; false when its lease was lost. */
  finishCrawlRequest(
    id: string,
    fence: Fence,
    status: 'completed' | 'invalid' | 'failed',
    changes: Partial<Pick<CrawlRequest, 'completed_at' | 'next_attempt_at' | 'last_error_code'>>,
  ): Promise<boolean>
  /** Gives a claimed request back as `retrying` at `nextAttemptIso`; false when its lease was lost. */
  retryCrawlRequest(id: string, fence: Fence, nextAttemptIso: string, errorCode: string): Promise<boolean>
  /** Extends a claimed request's lease. */
  renewCrawlRequest(id: string, fence: Fence, leaseUntilIso: string): Promise<boolean>
  /**
   * Requests left `running` past their lease by a registry that stopped: queued again while they have attempts
   * left, else failed.
   */
  recoverCrawlRequests(nowIso: string): Promise<{ requeued: number; failed: number }>
  /** The newest request for `domain` requested at or after `sinceIso`. */
  recentCrawlRequest(domain: string, sinceIso: string): Promise<CrawlRequest | undefined>
  saveReport(id: string, kind: string, body: unknown, createdAt: string): Promise<void>
  getReport(id: string, kind: string, sinceIso: string): Promise<unknown>
  counts(): Promise<RegistryCounts>
}

const toRequest = ({
  lease_until: _lease,
  ...row
}: CrawlRequest & { lease_until?: unknown }): CrawlRequest => ({
  ...row,
  attempts: Number(row.attempts),
  max_attempts: Number(row.max_attempts),
})

/** Crawl requests as a lease queue: `queued` or `retrying` (when due) → `running` → an end state. */
const CRAWL_QUEUE: LeaseQueueSpec = {
  table: 'registry_crawl_requests',
  key: 'id',
  state: 'status',
  attempts: 'attempts',
  leaseUntil: 'lease_until',
  dueAt: 'next_attempt_at',
  dueWhenNull: true,
  error: 'last_error_code',
  states: { ready: ['queued', 'retrying'], leased: 'running', done: 'completed' },
  order: 'requested_at, id',
}

/** The request statements on `db`. */
export function requestStore(db: SqlDriver): RequestStore {
  const queue = leaseQueue(db, CRAWL_QUEUE)
  return {
    async claimCrawlRequest(nowIso, leaseUntilIso) {
      const [claimed] = await queue.claim<CrawlRequest>({
        now: nowIso,
        leaseUntil: leaseUntilIso,
        limit: 1,
        set: { started_at: { sql: 'COALESCE(started_at, ?)', params: [nowIso] }, last_attempted_at: nowIso },
      })
      return claimed && { request: toRequest(claimed.row), fence: claimed.fence }
    },
    finishCrawlRequest: (id, fence, status, changes) =>
      queue.done(id, fence, {
        state: status,
        set: Object.fromEntries(Object.entries(changes).filter(([, value]) => value !== undefined)) as Record<
          string,
          string | null
        >,
      }),
    retryCrawlRequest: (id, fence, nextAttemptIso, errorCode) =>
      queue.retry(id, fence, { dueAt: nextAttemptIso, error: errorCode, state: 'retrying' }),
    renewCrawlRequest: (id, fence, leaseUntilIso) => queue.renew(id, fence, leaseUntilIso),
    async recoverCrawlRequests(nowIso) {
      const { requeued, failed } = await queue.recover({
        now: nowIso,
        maxAttempts: { column: 'max_attempts' },
        failed: { state: 'failed', set: { completed_at: nowIso, last_error_code: 'internal_error' } },
      })
      return { requeued: requeued.length, failed: failed.length }
    },
    async createCrawlRequest(request) {
      await db.run(
        `INSERT INTO registry_crawl_requests (id, domain, status, attempts, max_attempts, requested_by, requested_at,
           started_at, last_attempted_at, completed_at, next_attempt_at, last_error_code)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
        [
          request.id,
          request.domain,
          request.status,
          request.attempts,
          request.max_attempts,
          request.requested_by,
          request.requested_at,
          request.started_at,
          request.last_attempted_at,
          request.completed_at,
          request.next_attempt_at,
          request.last_error_code,
        ],
      )
    },
    async getCrawlRequest(id) {
      const row = await db.one<CrawlRequest>('SELECT * FROM registry_crawl_requests WHERE id = ?', [id])
      return row && toRequest(row)
    },
    async updateCrawlRequest(id, changes) {
      const entries = Object.entries(changes).filter(([, value]) => value !== undefined)
      if (entries.length === 0) return
      await db.run(
        `UPDATE registry_crawl_requests SET ${entries.map(([name]) => `${name} = ?`).join(', ')} WHERE id = ?`,
        [...entries.map(([, value]) => value as string | number | null), id],
      )
    },
    async nextCrawlRequest(nowIso) {
      const row = await db.one<CrawlRequest>(
        `SELECT * FROM registry_crawl_requests
         WHERE status = 'queued' OR (status = 'retrying' AND next_attempt_at <= ?)
         ORDER BY requested_at, id LIMIT 1`,
        [nowIso],
      )
      return row && toRequest(row)
    },
    async recentCrawlRequest(domain, sinceIso) {
      const row = await db.one<CrawlRequest>(
        `SELECT * FROM registry_crawl_requests WHERE domain = ? AND requested_at >= ? ORDER BY requested_at DESC LIMIT 1`,
        [domain, sinceIso],
      )
      return row && toRequest(row)
    },
    async saveReport(id, kind, body, createdAt) {
      await db.run('INSERT INTO registry_check_reports (id, kind, body, created_at) VALUES (?, ?, ?, ?)', [
        id,
        kind,
        JSON.stringify(body),
        createdAt,
      ])
    },
    async getReport(id, kind, sinceIso) {
      const row = await db.one<{ body: string }>(
        'SELECT body FROM registry_check_reports WHERE id = ? AND kind = ? AND created_at >= ?',
        [id, kind, sinceIso],
      )
      return row ? (JSON.parse(row.body) as unknown) : undefined
    },
    async counts() {
      const row = await db.one<Record<keyof RegistryCounts, number>>(
        `SELECT
          (SELECT CAST(COUNT(*) AS INTEGER) FROM registry_brands) AS brands,
          (SELECT CAST(COUNT(*) AS INTEGER) FROM registry_publishers) AS publishers,
          (SELECT CAST(COUNT(*) AS INTEGER) FROM registry_publishers WHERE valid = 1) AS publishers_with_valid_adagents,
          (SELECT CAST(COUNT(*) AS INTEGER) FROM registry_properties) AS properties,
          (SELECT CAST(COUNT(*) AS INTEGER) FROM registry_authorizations) AS authorizations,
          (SELECT CAST(COUNT(DISTINCT agent_url_canonical) AS INTEGER) FROM registry_authorizations) AS agents,
          (SELECT CAST(COUNT(*) AS INTEGER) FROM registry_member_agents) AS member_agents,
          (SELECT CAST(COUNT(*) AS INTEGER) FROM registry_feed_events) AS feed_events`,
      )
      const counts = {} as RegistryCounts
      for (const key of Object.keys(row ?? {}) as (keyof RegistryCounts)[])
        counts[key] = Number(row?.[key] ?? 0)
      return counts
    },
  }
}

/**
 * The discovery requests of migration 6: the last outbound request per (kind, target) — the 5-minute debounce
 * of brand crawls, forced crawls, manager fan-outs, adagents.json crawl requests and revalidations — and the manager re-validation queue.
 */
import type { SqlDriver } from '@adwire/sql'

export type OutboundKind =
  'brand_crawl' | 'force_brand_crawl' | 'manager_revalidation' | 'adagents_revalidation' | 'crawl_request'

export interface OutboundRequest {
  readonly kind: OutboundKind
  readonly target: string
  readonly requested_by: string | null
  readonly requested_at: string
  readonly status: 'queued' | 'running' | 'completed' | 'failed'
  readonly completed_at: string | null
  readonly last_error: string | null
}

export interface ManagerRevalidation {
  readonly publisher_domain: string
  readonly manager_domain: string
  readonly requested_by: string | null
  readonly enqueued_at: string
}

/** What one agent is authorized for, by property type and tag set (the inventory profile input). */
export interface InventoryRow {
  readonly agent_url_canonical: string
  readonly property_type: string
  /** JSON text of the tag list. */
  readonly tags: string
  readonly n: number
  readonly updated_at: string
}

export interface DiscoveryStore {
  /**
   * The authorized inventory of every agent in effect at `nowIso`: property counts grouped by agent, property
   * type and tags (publisher-wide grants count every property of the publisher once).
   */
  agentInventory(nowIso: string): Promise<InventoryRow[]>
  /**
   * Records a request of `kind` for `target` unless one was recorded after `sinceIso`: resolves to
   * `undefined` when recorded, else to the earlier request (the debounce answer).
   */
  claimOutbound(
    kind: OutboundKind,
    target: string,
    requestedBy: string | null,
    atIso: string,
    sinceIso: string,
  ): Promise<OutboundRequest | undefined>
  finishOutbound(
    kind: OutboundKind,
    target: string,
    status: OutboundRequest['status'],
    atIso: string,
    error?: string,
  ): Promise<void>
  getOutbound(kind: OutboundKind, target: string): Promise<OutboundRequest | undefined>
  /** Queues every publisher whose `manager_domain` is `manager`; resolves to the rows added or refreshed. */
  enqueueManagerRevalidation(manager: string, requestedBy: string | null, atIso: string): Promise<number>
  /** Removes and returns the `limit` oldest queued re-validations. */
  takeManagerRevalidations(limit: number): Promise<ManagerRevalidation[]>
  pendingManagerRevalidations(): Promise<number>
}

/** The discovery statements on `db`. */
export function discoveryStore(db: SqlDriver): DiscoveryStore {
  return {
    async agentInventory(nowIso) {
      const window = (a: string) =>
        `(${a}.effective_from IS NULL OR ${a}.effective_from <= ?) AND (${a}.effective_until IS NULL OR ${a}.effective_until > ?)`
      const rows = await db.all<InventoryRow>(
        `SELECT agent_url_canonical, property_type, tags, CAST(SUM(n) AS INTEGER) AS n, MAX(updated_at) AS updated_at
         FROM (
         SELECT a.agent_url_canonical, p.property_type, p.tags,
           COUNT(*) AS n, MAX(a.updated_at) AS updated_at
         FROM registry_authorizations a
         JOIN registry_properties p ON p.publisher_domain = a.publisher_domain AND p.property_id = a.property_id
         WHERE a.property_id <> '' AND ${window('a')}
           AND NOT EXISTS (SELECT 1 FROM registry_authorizations w WHERE w.agent_url_canonical = a.agent_url_canonical
             AND w.publisher_domain = a.publisher_domain AND w.property_id = '' AND ${window('w')})
         GROUP BY a.agent_url_canonical, p.property_type, p.tags
         UNION ALL
         SELECT a.agent_url_canonical, p.property_type, p.tags, COUNT(*) AS n, MAX(a.updated_at) AS updated_at
         FROM registry_authorizations a JOIN registry_properties p ON p.publisher_domain = a.publisher_domain
         WHERE a.property_id = '' AND ${window('a')}
         GROUP BY a.agent_url_canonical, p.property_type, p.tags
         ) grants GROUP BY agent_url_canonical, property_type, tags`,
        [nowIso, nowIso, nowIso, nowIso, nowIso, nowIso],
      )
      return rows.map((row) => ({ ...row, n: Number(row.n) }))
    },
    claimOutbound(kind, target, requestedBy, atIso, sinceIso) {
      return db.transaction(async (tx) => {
        if (tx.dialect === 'postgres') {
          await tx.run('SELECT pg_advisory_xact_lock(hashtext(?))', [`${kind}|${target}`])
        }
        const existing = await tx.one<OutboundRequest>(
          'SELECT * FROM registry_outbound_requests WHERE kind = ? AND target = ?',
          [kind, target],
        )
        if (existing && existing.requested_at > sinceIso) return existing
        await tx.run(
          `INSERT INTO registry_outbound_requests (kind, target, requested_by, requested_at, status, completed_at, last_error)
           VALUES (?, ?, ?, ?, 'queued', NULL, NULL)
           ON CONFLICT (kind, target) DO UPDATE SET requested_by = excluded.requested_by,
             requested_at = excluded.requested_at, status = 'queued', completed_at = NULL, last_error = NULL`,
          [kind, target, requestedBy, atIso],
        )
        return undefined
      })
    },
    async finishOutbound(kind, target, status, atIso, error) {
      await db.run(
        `UPDATE registry_outbound_requests SET status = ?, completed_at = ?, last_error = ? WHERE kind = ? AND target = ?`,
        [status, status === 'running' ? null : atIso, error ?? null, kind, target],
      )
    },
    getOutbound(kind, target) {
      return db.one<OutboundRequest>(
        'SELECT * FROM registry_outbound_requests WHERE kind = ? AND target = ?',
        [kind, target],
      )
    },
    enqueueManagerRevalidation(manager, requestedBy, atIso) {
      return db.run(
        `INSERT INTO registry_manager_revalidation_queue (publisher_domain, manager_domain, requested_by, enqueued_at)
         SELECT p.domain, ?, ?, ? FROM registry_publishers p WHERE p.manager_domain = ?
         ON CONFLICT (publisher_domain) DO UPDATE SET manager_domain = excluded.manager_domain,
           requested_by = excluded.requested_by`,
        [manager, requestedBy, atIso, manager],
      )
    },
    takeManagerRevalidations(limit) {
      return db.transaction(async (tx) => {
        const rows = await tx.all<ManagerRevalidation>(
          `SELECT publisher_domain, manager_domain, requested_by, enqueued_at FROM registry_manager_revalidation_queue
           ORDER BY enqueued_at, publisher_domain LIMIT ?`,
          [limit],
        )
        for (const row of rows) {
          await tx.run('DELETE FROM registry_manager_revalidation_queue WHERE publisher_domain = ?', [
            row.publisher_domain,
          ])
        }
        return rows
      })
    },
    async pendingManagerRevalidations() {
      const row = await db.one<{ n: number }>(
        'SELECT CAST(COUNT(*) AS INTEGER) AS n FROM registry_manager_revalidation_queue',
      )
      return Number(row?.n ?? 0)
    },
  }
}

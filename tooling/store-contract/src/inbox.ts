/**
 * The transactional inbox's contract (`DeliveryInbox` in @adwire/webhooks): one delivery's nonce, claim,
 * convergence record, event and acknowledgement commit together; a writer failure keeps nothing; deliveries
 * arriving together share a transaction without sharing a fate.
 */
import type { ReplayStore } from '@adwire/http-signatures'
import {
  WebhookError,
  type ClaimStore,
  type DeliveryInbox,
  type InboxDelivery,
  type ReceivedEvent,
} from '@adwire/webhooks'
import { describe, expect, it } from 'vitest'

/** An inbox whose writer stores `(scope, key, reemission)` rows, failing for the events `fail` picks. */
export interface ContractInbox {
  readonly inbox: DeliveryInbox
  /** The keys published in `scope` (one row per publication), sorted. */
  published(scope: string): Promise<string[]>
  /** The keys published with `reemission` set in `scope`, sorted. */
  reemitted(scope: string): Promise<string[]>
}

export interface InboxContractStores {
  readonly claims: ClaimStore
  readonly replay: ReplayStore
  /** Whether a failed delivery's writes are rolled back (durable stores) rather than compensated (memory). */
  readonly transactional: boolean
  openInbox(fail: (event: ReceivedEvent) => boolean): Promise<ContractInbox>
}

let counter = 0
const unique = (prefix: string) =>
  `${prefix}-${Date.now().toString(36)}-${(counter += 1)}-${Math.random().toString(36).slice(2, 8)}`

/**
 * A verified delivery for inbox tests: a fresh nonce of keyid `kid-<scope>`, a claim of `key` in `scope` at
 * time 1,000 (lease 30 s, retention one day, caps 1,000), a non-terminal MCP event.
 *
 * @example
 * await inbox.accept(inboxDelivery('seller-1', 'key-1', { notificationId: 'n-1' }))
 */
export function inboxDelivery(
  scope: string,
  key: string,
  overrides: Partial<InboxDelivery> = {},
): InboxDelivery {
  return {
    nonce: { keyid: `kid-${scope}`, nonce: unique('nonce'), expiresAt: 1_360, cap: 1_000 },
    claim: {
      namespace: 'webhook',
      scope,
      key,
      fingerprint: 'f'.repeat(64),
      now: 1_000,
      leaseSeconds: 30,
      retentionSeconds: 86_400,
      maxPerScope: 1_000,
    },
    event: {
      registrationId: 'contract',
      sender: scope,
      shape: 'mcp',
      idempotencyKey: key,
      terminal: false,
      data: null,
      payload: {},
      body: new Uint8Array(),
      receivedAt: 1_000,
    },
    ...overrides,
  }
}

/** Declares the inbox section; `stores()` answers the suite's opened stores. */
export function describeInboxContract(stores: () => InboxContractStores): void {
  describe('inbox', () => {
    it('commits nonce, claim and event together; a replayed nonce and a duplicate write nothing more', async () => {
      const { inbox, published } = await stores().openInbox(() => false)
      const scope = unique('sender')
      const first = inboxDelivery(scope, unique('key'))
      const outcome = await inbox.accept(first)
      expect(outcome).toMatchObject({ kind: 'published', event: { takeover: false, reemission: false } })
      expect(await stores().replay.seen(first.nonce!.keyid, first.nonce!.nonce, 1_001)).toBe(true)
      expect(await published(scope)).toEqual([first.claim.key])
      // The same signature again: replayed, before any claim.
      expect(await inbox.accept(first)).toEqual({ kind: 'replayed' })
      // A retry (new nonce, same payload) is a completed duplicate; another payload under the key conflicts.
      const retry = inboxDelivery(scope, first.claim.key)
      expect(await inbox.accept(retry)).toEqual({ kind: 'claim', claim: { kind: 'completed', result: null } })
      const changed = inboxDelivery(scope, first.claim.key, {
        claim: { ...first.claim, fingerprint: 'e'.repeat(64) },
      })
      expect(await inbox.accept(changed)).toEqual({ kind: 'claim', claim: { kind: 'conflict' } })
      // The refused deliveries' nonces were committed all the same.
      expect(await stores().replay.seen(changed.nonce!.keyid, changed.nonce!.nonce, 1_001)).toBe(true)
      expect(await published(scope)).toEqual([first.claim.key])
    })

    it('keeps nothing of a delivery whose writer failed: the next one publishes it', async () => {
      let failing = true
      const { inbox, published } = await stores().openInbox(() => failing)
      const scope = unique('sender')
      const first = inboxDelivery(scope, unique('key'))
      const refused = await inbox.accept(first).then(
        () => undefined,
        (error: unknown) => error,
      )
      expect(WebhookError.is(refused) && refused.code).toBe('webhook_publish_failed')
      // A transactional store rolls the nonce back with the rest (the memory store cannot).
      if (stores().transactional)
        expect(await stores().replay.seen(first.nonce!.keyid, first.nonce!.nonce, 1_001)).toBe(false)
      expect(await published(scope)).toEqual([])
      failing = false
      expect(await inbox.accept(inboxDelivery(scope, first.claim.key))).toMatchObject({ kind: 'published' })
      expect(await published(scope)).toEqual([first.claim.key])
    })

    it('converges terminal outcomes: first wins, a repeat is a duplicate, another conflicts, later non-terminal is stale', async () => {
      const { inbox, published } = await stores().openInbox(() => false)
      const scope = unique('sender')
      const taskId = unique('task')
      const observe = (key: string, terminal: boolean, comparison: string) =>
        inboxDelivery(scope, key, {
          observation: {
            sender: scope,
            taskId,
            terminal,
            comparison,
            deliveryKey: key,
            now: 1_000,
            leaseSeconds: 30,
            retentionSeconds: 86_400,
          },
        })
      const first = unique('key')
      expect(await inbox.accept(observe(first, true, 'a'.repeat(64)))).toMatchObject({ kind: 'published' })
      expect(await inbox.accept(observe(unique('key'), true, 'a'.repeat(64)))).toEqual({
        kind: 'convergence',
        result: 'duplicate',
      })
      const conflicting = unique('key')
      expect(await inbox.accept(observe(conflicting, true, 'b'.repeat(64)))).toEqual({
        kind: 'convergence',
        result: 'conflict',
      })
      expect(await inbox.accept(observe(unique('key'), false, 'c'.repeat(64)))).toEqual({
        kind: 'convergence',
        result: 'stale',
      })
      expect(await published(scope)).toEqual([first])
      // The conflicting delivery's claim was given back, still bound to its payload.
      const again = await stores().claims.claim({ ...observe(conflicting, true, '').claim, now: 1_001 })
      expect(again).toMatchObject({ kind: 'claimed', takeover: true })
    })

    it('marks a notification published again under another key as a re-emission', async () => {
      const { inbox, reemitted } = await stores().openInbox(() => false)
      const scope = unique('sender')
      const notificationId = unique('notification')
      const first = unique('key')
      const second = unique('key')
      await inbox.accept(inboxDelivery(scope, first, { notificationId }))
      expect(await inbox.accept(inboxDelivery(scope, second, { notificationId }))).toMatchObject({
        kind: 'published',
        event: { reemission: true },
      })
      expect(await reemitted(scope)).toEqual([second])
    })

    it('publishes each of many concurrent deliveries once, isolating a failing one from the rest', async () => {
      const { inbox, published } = await stores().openInbox((event) => event.idempotencyKey.endsWith('-x'))
      const scope = unique('sender')
      const keys = Array.from({ length: 12 }, (_, index) => `${unique('key')}${index === 5 ? '-x' : ''}`)
      const outcomes = await Promise.allSettled(
        keys.flatMap((key) => Array.from({ length: 4 }, () => inbox.accept(inboxDelivery(scope, key)))),
      )
      const accepted = outcomes.filter(
        (outcome) => outcome.status === 'fulfilled' && outcome.value.kind === 'published',
      )
      expect(accepted).toHaveLength(11)
      // The failing key's copies fail (or, on stores without transactions, meet its claim in flight).
      expect(outcomes.filter((outcome) => outcome.status === 'rejected').length).toBeGreaterThanOrEqual(1)
      expect(await published(scope)).toEqual(keys.filter((key) => !key.endsWith('-x')).sort())
    })
  })
}

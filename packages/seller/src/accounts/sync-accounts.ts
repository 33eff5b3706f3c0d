/**
 * sync_accounts and list_accounts: buyer-declared accounts by natural key (brand + operator + sandbox), each
 * created or updated (or, keyed by an `account` reference, updated only: an unknown one is ACCOUNT_NOT_FOUND) with its billing, payment terms and account-level notification_configs (validated per
 * account: a bad set fails that account with `action: failed`, `status: rejected` and the offending field);
 * list_accounts pages the caller's accounts.
 */
import { AgentError, type TaskContext } from '@adwire/agent-server'
import { isKitKeyPrincipal } from '../auth/test-kits.js'
import { SUPPORTED_BILLING } from '../capabilities.js'
import { pageOf, pageResponse } from '../catalog/get-products.js'
import { callPlatform } from '../platform.js'
import { isoAt, isObject, ownerOf, type Seller } from '../seller.js'
import { ACCOUNT_EVENT_TYPES, configProblem, normalizeConfigs } from './notification-configs.js'
import { ACCOUNT_KIND, naturalAccountId, newAccount, sandboxOf } from './resolve.js'
import type { AccountRecord } from './types.js'

/** An account as core/account.json. */
export function accountView(account: AccountRecord): Record<string, unknown> {
  return {
    account_id: account.account_id,
    name: String(account.brand.domain ?? account.account_id),
    status: account.status,
    brand: account.brand,
    ...(account.operator ? { operator: account.operator } : {}),
    ...(account.billing ? { billing: account.billing } : {}),
    ...(account.payment_terms ? { payment_terms: account.payment_terms } : {}),
    account_scope: account.operator ? 'operator_brand' : 'brand',
    ...(account.sandbox ? { sandbox: true } : {}),
    notification_configs: account.notification_configs,
  }
}

/** Whether the caller authenticated with an official test-kit key (sandbox or live). */
const isKitPrincipal = (seller: Seller, owner: string) =>
  seller.kits.some((kit) => isKitKeyPrincipal(kit, owner))

/**
 * @example
 * await syncAccounts(seller, { accounts: [{ brand: { domain: 'acme.example' }, operator: 'acme.example' }] }, context)
 */
export async function syncAccounts(
  seller: Seller,
  request: Record<string, unknown>,
  context: TaskContext,
): Promise<Record<string, unknown>> {
  const owner = ownerOf(context)
  const results: Record<string, unknown>[] = []
  for (const entry of (request.accounts as unknown[]).filter(isObject)) {
    const ref = {
      brand: entry.brand,
      operator: entry.operator,
      ...(entry.sandbox === true ? { sandbox: true } : {}),
    }
    const echo = { brand: entry.brand, operator: entry.operator }
    const problem =
      entry.notification_configs === undefined
        ? undefined
        : configProblem(entry.notification_configs, ACCOUNT_EVENT_TYPES)
    if (
      typeof entry.billing === 'string' &&
      !(SUPPORTED_BILLING as readonly string[]).includes(entry.billing)
    ) {
      results.push({
        ...echo,
        action: 'failed',
        status: 'rejected',
        errors: [
          {
            code: 'BILLING_NOT_SUPPORTED',
            message: `billing ${entry.billing} is not offered; this seller bills ${SUPPORTED_BILLING.join(' or ')}`,
            field: 'billing',
            recovery: 'correctable',
            details: {
              scope: 'capability',
              supported_billing: [...SUPPORTED_BILLING],
              suggested_billing: SUPPORTED_BILLING[0],
            },
          },
        ],
      })
      continue
    }
    if (entry.billing === 'agent' && isKitPrincipal(seller, owner)) {
      // The official test-kit callers are onboarded as passthrough-only buyer agents (billing-gate-runner.yaml
      // commercial_relationship): agent billing is refused for them, naming the party they may use instead.
      results.push({
        ...echo,
        action: 'failed',
        status: 'rejected',
        errors: [
          {
            code: 'BILLING_NOT_PERMITTED_FOR_AGENT',
            message:
              'this buyer agent is onboarded as passthrough-only; agent billing is not permitted for it',
            field: 'billing',
            recovery: 'correctable',
            details: { rejected_billing: 'agent', suggested_billing: 'operator' },
          },
        ],
      })
      continue
    }
    if (problem) {
      results.push({
        ...echo,
        action: 'failed',
        status: 'rejected',
        errors: [{ code: 'INVALID_REQUEST', message: problem.message, field: problem.field }],
      })
      continue
    }
    // Settings-update mode (`account`: an AccountRef): the entry updates that account and never provisions one.
    const target = isObject(entry.account) ? entry.account : undefined
    const id = target
      ? typeof target.account_id === 'string'
        ? target.account_id
        : naturalAccountId(owner, target)
      : naturalAccountId(owner, ref)
    const found = await seller.records.get<AccountRecord>(ACCOUNT_KIND, id)
    const existing = found && found.owner === owner ? found : undefined
    if (target && !existing) {
      results.push({
        brand: isObject(target.brand) ? target.brand : { domain: 'unknown.example' },
        operator: typeof target.operator === 'string' ? target.operator : 'unknown.example',
        action: 'failed',
        status: 'rejected',
        errors: [
          {
            code: 'ACCOUNT_NOT_FOUND',
            message: `no account ${id} to update; provision it with brand, operator and billing`,
            field: 'account',
            recovery: 'terminal',
          },
        ],
      })
      continue
    }
    const changes: Partial<AccountRecord> = {
      ...(typeof entry.billing === 'string' ? { billing: entry.billing } : {}),
      ...(typeof entry.payment_terms === 'string' ? { payment_terms: entry.payment_terms } : {}),
      ...(Array.isArray(entry.notification_configs)
        ? { notification_configs: normalizeConfigs(entry.notification_configs as Record<string, unknown>[]) }
        : {}),
    }
    const account: AccountRecord = existing
      ? { ...existing.body, ...changes, updated_at: isoAt(seller.now()) }
      : newAccount(seller, owner, ref, changes)
    const unchanged =
      existing !== undefined &&
      JSON.stringify({ ...existing.body, updated_at: '' }) === JSON.stringify({ ...account, updated_at: '' })
    const provision = seller.platform.provisionAccount
    if (request.dry_run !== true && !unchanged && provision) {
      // The ad server opens (or updates) the account first, outside any transaction; a refusal fails this one.
      try {
        const outcome = await callPlatform(
          'provision the account',
          () => provision.call(seller.platform, account, existing ? 'updated' : 'created'),
          seller.log,
        )
        if (outcome?.status) account.status = outcome.status
      } catch (error) {
        if (!(error instanceof AgentError)) throw error
        results.push({
          ...echo,
          ...(target ? { account_id: id } : {}),
          action: 'failed',
          status: 'rejected',
          errors: [{ code: error.code, message: error.message, recovery: error.recovery }],
        })
        continue
      }
    }
    if (request.dry_run !== true && !unchanged) await seller.records.put(ACCOUNT_KIND, id, owner, account)
    results.push({
      ...accountView(account),
      ...(target ? {} : echo),
      action: existing ? (unchanged ? 'unchanged' : 'updated') : 'created',
      sandbox: target ? account.sandbox === true : sandboxOf(seller, owner, ref),
    })
  }
  return { ...(request.dry_run === true ? { dry_run: true } : {}), accounts: results }
}

/**
 * @example
 * await listAccounts(seller, { pagination: { max_results: 10 } }, context)
 */
export async function listAccounts(
  seller: Seller,
  request: Record<string, unknown>,
  context: TaskContext,
): Promise<Record<string, unknown>> {
  const owner = ownerOf(context)
  let accounts = (await seller.records.list<AccountRecord>(ACCOUNT_KIND, { owner })).map(
    (stored) => stored.body,
  )
  if (typeof request.status === 'string')
    accounts = accounts.filter((account) => account.status === request.status)
  if (typeof request.sandbox === 'boolean')
    accounts = accounts.filter((account) => account.sandbox === request.sandbox)
  if (isObject(request.account)) {
    const wanted =
      typeof request.account.account_id === 'string'
        ? request.account.account_id
        : naturalAccountId(owner, request.account)
    accounts = accounts.filter((account) => account.account_id === wanted)
  }
  const { limit, offset } = pageOf(request.pagination)
  return {
    accounts: accounts.slice(offset, offset + limit).map(accountView),
    pagination: pageResponse(offset, limit, accounts.length),
  }
}

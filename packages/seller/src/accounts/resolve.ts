/**
 * Accounts by reference: an `account_id`, or the natural key (brand + operator + sandbox) of a buyer-declared
 * account. A natural key never seen before provisions an active account on first use (require_operator_auth is
 * false), so a buyer may skip sync_accounts; an unknown account_id is ACCOUNT_NOT_FOUND.
 */
import { createHash } from 'node:crypto'
import { AgentError } from '@adwire/agent-server'
import { isLivePrincipal, isoAt, isObject, isSandboxPrincipal, type Seller } from '../seller.js'
import type { AccountRecord } from './types.js'

export const ACCOUNT_KIND = 'account'

/** The account id of a natural key, stable per caller. */
export function naturalAccountId(owner: string, ref: Record<string, unknown>): string {
  const brand = isObject(ref.brand) ? ref.brand : {}
  const key = [
    owner,
    brand.domain ?? '',
    brand.brand_id ?? '',
    ref.operator ?? '',
    ref.sandbox === true,
  ].join('|')
  return `acct_${createHash('sha256').update(key).digest('hex').slice(0, 16)}`
}

/** Whether an account reference (or the caller's key) makes a sandbox account. */
export function sandboxOf(seller: Seller, owner: string, ref: Record<string, unknown>): boolean {
  if (isLivePrincipal(seller, owner)) return false
  return ref.sandbox === true || isSandboxPrincipal(seller, owner)
}

/** A new account record for a natural key. */
export function newAccount(
  seller: Seller,
  owner: string,
  ref: Record<string, unknown>,
  extra: Partial<AccountRecord> = {},
): AccountRecord {
  const at = isoAt(seller.now())
  return {
    account_id: naturalAccountId(owner, ref),
    owner,
    brand: isObject(ref.brand) ? ref.brand : {},
    ...(typeof ref.operator === 'string' ? { operator: ref.operator } : {}),
    status: 'active',
    sandbox: sandboxOf(seller, owner, ref),
    notification_configs: [],
    governance_agents: [],
    created_at: at,
    updated_at: at,
    ...extra,
  }
}

/**
 * The caller's account for `ref`, provisioning a natural-key account on first use.
 *
 * @example
 * const account = await resolveAccount(seller, 'buyer-1', { brand: { domain: 'acme.example' }, operator: 'acme.example' })
 */
export async function resolveAccount(seller: Seller, owner: string, ref: unknown): Promise<AccountRecord> {
  if (!isObject(ref))
    throw new AgentError('INVALID_REQUEST', 'account is required', { field: 'account', status: 400 })
  if (typeof ref.account_id === 'string') {
    const found = await seller.records.get<AccountRecord>(ACCOUNT_KIND, ref.account_id)
    if (!found || found.owner !== owner)
      throw new AgentError('ACCOUNT_NOT_FOUND', `no account ${ref.account_id} for this caller`, {
        field: 'account.account_id',
        status: 404,
      })
    return found.body
  }
  const id = naturalAccountId(owner, ref)
  const found = await seller.records.get<AccountRecord>(ACCOUNT_KIND, id)
  if (found) return found.body
  const account = newAccount(seller, owner, ref)
  await seller.records.insert(ACCOUNT_KIND, id, owner, account)
  return (await seller.records.get<AccountRecord>(ACCOUNT_KIND, id))!.body
}

/** An account the caller may transact on: active, else the spec's code for its status. */
export function assertUsable(account: AccountRecord): void {
  const codes: Record<string, string> = {
    suspended: 'ACCOUNT_SUSPENDED',
    payment_required: 'ACCOUNT_PAYMENT_REQUIRED',
    pending_approval: 'ACCOUNT_SETUP_REQUIRED',
    rejected: 'ACCOUNT_SUSPENDED',
    closed: 'ACCOUNT_SUSPENDED',
  }
  const code = codes[account.status]
  if (code)
    throw new AgentError(code, `account ${account.account_id} is ${account.status}`, {
      field: 'account',
      status: 403,
    })
}

/**
 * The sandbox a request runs in: the caller's principal id when the request acts on one of its sandbox accounts,
 * else undefined (anonymous callers, live keys and live accounts see the live seller, which no seed changes).
 * A sandbox principal is always in its sandbox; another caller is when the request's account is sandbox in the
 * seller's records (`account_id`) or is a natural key that makes a sandbox account (`sandbox: true`).
 *
 * @example
 * const sandbox = await requestSandbox(seller, context.principal?.principal_id, request.account)
 * const products = await seller.products.all(sandbox)
 */
export async function requestSandbox(
  seller: Seller,
  principalId: string | undefined,
  ref: unknown,
): Promise<string | undefined> {
  if (principalId === undefined || isLivePrincipal(seller, principalId)) return undefined
  if (isSandboxPrincipal(seller, principalId)) return principalId
  if (!isObject(ref)) return undefined
  if (typeof ref.account_id === 'string') {
    const found = await seller.records.get<AccountRecord>(ACCOUNT_KIND, ref.account_id)
    return found?.owner === principalId && found.body.sandbox ? principalId : undefined
  }
  return ref.sandbox === true ? principalId : undefined
}

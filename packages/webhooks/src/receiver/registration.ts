import type { Registration } from './types.js'

const MODES = new Set(['rfc9421', 'hmac', 'bearer'])

/**
 * What is wrong with a registration the receiver was handed, or undefined when it can be used:
 * - an unknown auth mode;
 * - a property-list registration with a legacy mode: property lists have no legacy authentication selector
 *   and authenticate with RFC 9421 only (AdCP 3.1 property-list webhooks);
 * - an empty `sender`, which would merge every such registration into one nameless keyspace.
 *
 * @example
 * registrationProblem({ id: 'r1', auth: { mode: 'hmac', secret }, shape: 'property-list' })
 * // 'property-list registrations authenticate with RFC 9421 only, not hmac'
 */
export function registrationProblem(registration: Registration): string | undefined {
  const mode = (registration.auth as { mode?: unknown } | undefined)?.mode
  if (typeof mode !== 'string' || !MODES.has(mode))
    return `registration ${registration.id} has no usable auth mode (rfc9421, hmac or bearer)`
  if (registration.shape === 'property-list' && mode !== 'rfc9421')
    return `property-list registrations authenticate with RFC 9421 only, not ${mode}`
  if (registration.sender !== undefined && (typeof registration.sender !== 'string' || !registration.sender))
    return `registration ${registration.id} has an empty sender`
  return undefined
}

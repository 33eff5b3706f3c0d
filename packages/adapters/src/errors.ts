/**
 * Thrown when the bytes a signature covers are gone: a body parser read and re-encoded the request before the
 * adapter saw it. Never answered as a signature failure: the app is misconfigured, and the message says how to
 * fix it.
 */
export class RawBodyUnavailableError extends Error {
  readonly code = 'raw_body_unavailable'
  override readonly name = 'RawBodyUnavailableError'

  constructor(fix: string) {
    super(
      `the raw request body is not available: a body parser consumed it before the AdCP adapter, and the ` +
        `signature covers the exact bytes received. ${fix}`,
    )
  }
}

/**
 * Test helper (not exported by the package): a `get_adcp_capabilities` response shaped after the AdCP 3.1.19
 * schema `protocol/get-adcp-capabilities-response.json` (required `adcp`, `supported_protocols` and, from the
 * protocol envelope, `status`; the `request_signing`, `webhook_signing` and `identity` blocks as a signing
 * seller publishes them).
 */
export function capabilitiesDocument(
  identity: Record<string, unknown> | undefined,
  overrides: Record<string, unknown> = {},
): Record<string, unknown> {
  return {
    status: 'completed',
    adcp: {
      major_versions: [3],
      supported_versions: ['3.1'],
      idempotency: { supported: true, replay_ttl_seconds: 86_400 },
    },
    supported_protocols: ['media_buy'],
    request_signing: {
      supported: true,
      covers_content_digest: 'required',
      required_for: ['create_media_buy'],
      warn_for: [],
      supported_for: ['create_media_buy', 'update_media_buy'],
    },
    webhook_signing: {
      supported: true,
      profile: 'adcp/webhook-signing/v1',
      algorithms: ['ed25519', 'ecdsa-p256-sha256'],
      legacy_hmac_fallback: false,
    },
    ...(identity === undefined ? {} : { identity }),
    last_updated: '2026-04-18T10:00:00Z',
    ...overrides,
  }
}

import { signWebhook, type AdcpJwk } from '@adwire/http-signatures'

/** A delivery of `payload` to `url` signed with adwire's webhook signer (fresh nonce each call). */
export async function signed(
  key: AdcpJwk,
  url: string,
  payload: unknown,
  contentType = 'application/json',
): Promise<{ headers: Record<string, string>; body: string }> {
  const body = JSON.stringify(payload)
  const message = await signWebhook(
    { method: 'POST', url, headers: { 'content-type': contentType }, body },
    { key },
  )
  return { headers: Object.fromEntries(new Headers(message.headers)), body }
}

/**
 * The one signature the ceilings check for every delivery (bench/ceiling-entry.ts, bench/durable-ceiling-entry.ts):
 * an Ed25519 key of their own and a fixed signature base about the size of a delivery's (six components and
 * the parameters), signed once; and the answer they give.
 */
import { generateKeyPairSync, sign } from 'node:crypto'

const keys = generateKeyPairSync('ed25519')
export const publicKey = keys.publicKey
export const base = Buffer.from(
  [
    '"@method": POST',
    '"@target-uri": http://127.0.0.1/webhooks/0123456789abcdefghijkl',
    '"@authority": 127.0.0.1',
    '"content-type": application/json',
    `"content-digest": sha-256=:${'A'.repeat(43)}=:`,
    `"@signature-params": ("@method" "@target-uri" "@authority" "content-type" "content-digest");created=1;` +
      `expires=301;nonce="${'n'.repeat(22)}";keyid="bench-service";alg="ed25519";tag="adcp/webhook-signing/v1"`,
  ].join('\n'),
)
export const signature = sign(null, base, keys.privateKey)
export const ACCEPTED = '{"status":"accepted"}'

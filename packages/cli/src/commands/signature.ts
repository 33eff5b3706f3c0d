import { parseArgs, type ParseArgsConfig } from 'node:util'
import {
  buildSignatureBase,
  MemoryReplayStore,
  SignatureError,
  signRequest,
  signWebhook,
  staticRevocation,
  verifyRequest,
  verifyWebhook,
  type AdcpJwk,
  type Jwks,
  type RequestProfileVersion,
  type VerifiedSignature,
} from '@adwire/http-signatures'
import { printJson, UsageError, type Io } from '../io.js'
import { parseNow, readJsonFile, readRequestFile, toMessage, type RequestFile } from '../request-file.js'

type Profile = 'webhook' | 'request'

const verifyOptions = {
  help: { type: 'boolean', short: 'h' },
  request: { type: 'string' },
  jwks: { type: 'string' },
  now: { type: 'string' },
  replayed: { type: 'string', multiple: true },
  revoked: { type: 'string', multiple: true },
  profile: { type: 'string' },
  'covers-content-digest': { type: 'string' },
  'required-for': { type: 'string', multiple: true },
} as const satisfies ParseArgsConfig['options']

const signOptions = {
  help: { type: 'boolean', short: 'h' },
  request: { type: 'string' },
  key: { type: 'string' },
  now: { type: 'string' },
  profile: { type: 'string' },
} as const satisfies ParseArgsConfig['options']

interface VerifyInputs {
  readonly request: RequestFile
  readonly jwks: Jwks
  readonly now?: number
  readonly replayStore: MemoryReplayStore
  readonly revoked: readonly string[]
  readonly version: RequestProfileVersion
  readonly coversContentDigest?: 'required' | 'forbidden' | 'either'
  readonly requiredFor: readonly string[]
}

function requestProfile(value: string | undefined): RequestProfileVersion {
  if (value === undefined || value === '3.2') return '3.2'
  if (value === '3.1') return '3.1'
  throw new UsageError(`--profile must be 3.1 or 3.2, not "${value}"`)
}

async function readVerifyInputs(argv: string[], io: Io): Promise<VerifyInputs> {
  const { values } = parseArgs({ args: argv, options: verifyOptions })
  if (!values.request) throw new UsageError('--request is required')
  if (!values.jwks) throw new UsageError('--jwks is required')
  const request = await readRequestFile(io, values.request)
  const jwks = (await readJsonFile(io, values.jwks, 'JWKS file')) as Jwks
  if (!jwks || typeof jwks !== 'object' || !Array.isArray(jwks.keys))
    throw new UsageError(`JWKS file ${values.jwks} must be {"keys":[…]}`)
  const now = parseNow(values.now)
  const replayStore = new MemoryReplayStore()
  for (const entry of values.replayed ?? []) {
    const split = entry.lastIndexOf(':')
    if (split <= 0 || split === entry.length - 1)
      throw new UsageError(`--replayed takes KEYID:NONCE, not "${entry}"`)
    const clock = now ?? Math.floor(Date.now() / 1000)
    await replayStore.remember(
      entry.slice(0, split),
      entry.slice(split + 1),
      clock + 360,
      Number.MAX_SAFE_INTEGER,
      clock,
    )
  }
  const covers = values['covers-content-digest']
  if (covers !== undefined && covers !== 'required' && covers !== 'forbidden' && covers !== 'either') {
    throw new UsageError('--covers-content-digest must be required, forbidden or either')
  }
  return {
    request,
    jwks,
    ...(now === undefined ? {} : { now }),
    replayStore,
    revoked: values.revoked ?? [],
    version: requestProfile(values.profile),
    ...(covers ? { coversContentDigest: covers } : {}),
    requiredFor: values['required-for'] ?? [],
  }
}

/** Runs the verifier; resolves with the verified signature or throws its SignatureError. */
async function runVerifier(
  profile: Profile,
  inputs: VerifyInputs,
): Promise<VerifiedSignature | { unsigned: true }> {
  const common = {
    keys: inputs.jwks,
    ...(inputs.now === undefined ? {} : { now: inputs.now }),
    replayStore: inputs.replayStore,
    ...(inputs.revoked.length > 0 ? { revocation: staticRevocation(inputs.revoked) } : {}),
  }
  const message = toMessage(inputs.request)
  if (profile === 'webhook') return verifyWebhook(message, common)
  const result = await verifyRequest(message, {
    ...common,
    profile: inputs.version,
    capability: {
      ...(inputs.coversContentDigest ? { covers_content_digest: inputs.coversContentDigest } : {}),
      required_for: [...inputs.requiredFor],
    },
  })
  if (result.status === 'verified') return result
  if (result.status === 'unsigned') return { unsigned: true }
  throw result.error
}

async function verify(profile: Profile, argv: string[], io: Io): Promise<number> {
  const inputs = await readVerifyInputs(argv, io)
  try {
    const result = await runVerifier(profile, inputs)
    if ('unsigned' in result) {
      printJson(io, { ok: true, signed: false })
      return 0
    }
    printJson(io, { ok: true, keyid: result.keyid })
    return 0
  } catch (error) {
    if (!SignatureError.is(error)) throw error
    printJson(io, { ok: false, code: error.code, message: error.message })
    return 1
  }
}

async function sign(profile: Profile, argv: string[], io: Io): Promise<number> {
  const { values } = parseArgs({ args: argv, options: signOptions })
  if (!values.request) throw new UsageError('--request is required')
  if (!values.key)
    throw new UsageError('--key is required (a private JWK file, e.g. from `adwire keys generate`)')
  const request = await readRequestFile(io, values.request)
  const file = (await readJsonFile(io, values.key, 'key file')) as { private_jwk?: AdcpJwk } & AdcpJwk
  const key = file.private_jwk ?? file
  if (!key || typeof key !== 'object' || typeof key.d !== 'string')
    throw new UsageError(`key file ${values.key} holds no private JWK (no "d")`)
  const now = parseNow(values.now)
  const options = { key, ...(now === undefined ? {} : { now }) }
  try {
    const signed =
      profile === 'webhook'
        ? await signWebhook(toMessage(request), options)
        : await signRequest(toMessage(request), { ...options, profile: requestProfile(values.profile) })
    printJson(io, { method: signed.method, url: signed.url, headers: signed.headers, body: request.body })
    return 0
  } catch (error) {
    if (SignatureError.is(error)) throw new UsageError(`cannot sign: ${error.message} (${error.code})`)
    throw error
  }
}

const WEBHOOK_STEPS: ReadonlyArray<readonly [string, string]> = [
  ['1', 'parse Signature-Input and Signature (label sig1, unpadded base64url)'],
  ['2', 'all six parameters present: created, expires, nonce, keyid, alg, tag'],
  ['3', 'tag is adcp/webhook-signing/v1'],
  ['4', 'alg is ed25519 or ecdsa-p256-sha256'],
  ['5', 'window: created ≤ now+60, expires ≥ now−60, 0 < expires−created ≤ 300'],
  ['6', 'covered: @method @target-uri @authority content-type content-digest'],
  ['7', 'keyid resolves to a key'],
  [
    '8',
    'key purpose: use sig, key_ops verify, adcp_use request-signing or webhook-signing, alg/kty/crv agree',
  ],
  ['9', 'keyid not revoked; revocation list fresh'],
  ['9a', 'keyid below its replay-cache cap'],
  ['10', 'signature verifies over the signature base'],
  ['11', 'Content-Digest matches the body'],
  ['12', 'nonce not seen before'],
  ['13', 'nonce remembered'],
  ['14', 'body has no duplicate JSON keys'],
]
const REQUEST_STEPS: ReadonlyArray<readonly [string, string]> = [
  ['0', 'signature required for this operation, or another credential present'],
  ...WEBHOOK_STEPS.map(([step, text]): readonly [string, string] =>
    step === '3'
      ? [step, 'tag is adcp/request-signing/v1']
      : step === '6'
        ? [
            step,
            'covered: @method @target-uri @authority, content-type with a body, content-digest per policy',
          ]
        : step === '8'
          ? [step, 'key purpose: use sig, key_ops verify, adcp_use request-signing, alg/kty/crv agree']
          : [step, text],
  ),
]

async function explain(argv: string[], io: Io): Promise<number> {
  const [first, ...rest] = argv
  const profile: Profile = first === 'request' ? 'request' : 'webhook'
  const inputs = await readVerifyInputs(first === 'request' || first === 'webhook' ? rest : argv, io)
  const steps = profile === 'webhook' ? WEBHOOK_STEPS : REQUEST_STEPS
  const lines: string[] = [
    `${profile} signature, checked at ${inputs.now ?? 'the current time'}${profile === 'request' ? ` (profile ${inputs.version})` : ''}`,
    '',
  ]
  let failedAt: string | undefined
  let outcome: string
  try {
    const result = await runVerifier(profile, inputs)
    outcome =
      'unsigned' in result
        ? 'accepted: unsigned, and no signature is required for this operation'
        : `accepted: keyid ${result.keyid}`
  } catch (error) {
    if (!SignatureError.is(error)) throw error
    failedAt = String(error.step ?? '?')
    outcome = `rejected at step ${failedAt}: ${error.code}\n  ${error.message}`
  }
  let reached = true
  for (const [step, text] of steps) {
    const mark = !reached ? '  ' : step === failedAt ? '✗ ' : '✓ '
    lines.push(`${mark}${step.padStart(2)}  ${text}${step === failedAt ? '   ← stopped here' : ''}`)
    if (step === failedAt) reached = false
  }
  lines.push('', outcome, '', 'signature base:')
  try {
    lines.push(
      ...buildSignatureBase(toMessage(inputs.request), { profile })
        .split('\n')
        .map((line) => `  ${line}`),
    )
  } catch (error) {
    if (!SignatureError.is(error)) throw error
    lines.push(`  (none: ${error.message})`)
  }
  io.stdout(`${lines.join('\n')}\n`)
  return failedAt === undefined ? 0 : 1
}

export const signatureCommands = {
  webhook: {
    verify: (argv: string[], io: Io) => verify('webhook', argv, io),
    sign: (argv: string[], io: Io) => sign('webhook', argv, io),
  },
  request: {
    verify: (argv: string[], io: Io) => verify('request', argv, io),
    sign: (argv: string[], io: Io) => sign('request', argv, io),
  },
  explain,
}

import { parseArgs } from 'node:util'
import { generateSigningKey, type KeyAlgorithm } from '@adwire/http-signatures'
import { printJson, UsageError, type Io } from '../io.js'
import { asTyped } from '../help.js'

export const keysHelp = `usage: adwire keys generate --alg ed25519|es256 --kid KID [--adcp-use PURPOSE]

  generate                     create a signing key; prints one JSON line {"private_jwk":{…},"jwks":{"keys":[…]}}:
                               keep private_jwk secret (adwire webhook sign --key takes it), publish jwks at
                               your agent's jwks_uri

options:
  --alg ed25519|es256          the key type (required)
  --kid KID                    the key id, sent as the keyid signature parameter (required)
  --adcp-use PURPOSE           the published purpose (default request-signing, which webhooks accept too)
  -h, --help                   show this help
`

export async function keysCommand(argv: string[], io: Io): Promise<number> {
  const { values, positionals } = parseArgs({
    args: argv,
    options: {
      help: { type: 'boolean', short: 'h' },
      alg: { type: 'string' },
      kid: { type: 'string' },
      'adcp-use': { type: 'string' },
    },
    allowPositionals: true,
  })
  const [sub] = positionals
  if (values.help || sub === undefined) {
    io.stdout(asTyped(keysHelp))
    return values.help ? 0 : 2
  }
  if (sub !== 'generate') throw new UsageError(`unknown command "keys ${sub}"`)
  if (values.alg === undefined) throw new UsageError('--alg is required (ed25519 or es256)')
  if (values.alg !== 'ed25519' && values.alg !== 'es256')
    throw new UsageError(`--alg must be ed25519 or es256, not "${values.alg}"`)
  if (!values.kid) throw new UsageError('--kid is required')
  const generated = await generateSigningKey({
    alg: values.alg as KeyAlgorithm,
    kid: values.kid,
    ...(values['adcp-use'] ? { adcpUse: values['adcp-use'] } : {}),
  })
  printJson(io, { private_jwk: generated.privateJwk, jwks: generated.jwks })
  return 0
}

import { UsageError, type Io } from '../io.js'
import { signatureCommands } from './signature.js'
import { asTyped } from '../help.js'

export const requestHelp = `usage: adwire request <command> [options]

  verify --request FILE --jwks FILE [--profile 3.1|3.2] [--now S] [--replayed KEYID:NONCE]… [--revoked KID]…
         [--covers-content-digest required|forbidden|either] [--required-for OPERATION]…
                               verify an RFC 9421 request signature (AdCP request profile); prints
                               {"ok":true,"keyid":"…"}, {"ok":true,"signed":false} for an unsigned request that
                               needs no signature, or {"ok":false,"code":"request_…","message":"…"}
  sign --request FILE --key PRIVATE_JWK_FILE [--profile 3.1|3.2] [--now S]
                               print the request with Signature-Input and Signature (and Content-Digest when
                               it has a body) added; --profile defaults to 3.2

FILE is JSON {"method","url","headers":{…},"body":"…"}; - reads standard input. Exit codes: 0 accepted,
1 rejected, 2 bad usage or unreadable input (message on stderr).
`

export async function requestCommand(argv: string[], io: Io): Promise<number> {
  const [sub, ...rest] = argv
  if (
    sub === undefined ||
    sub === '--help' ||
    sub === '-h' ||
    rest.includes('--help') ||
    rest.includes('-h')
  ) {
    io.stdout(asTyped(requestHelp))
    return sub === undefined ? 2 : 0
  }
  if (sub === 'verify' || sub === 'sign') return signatureCommands.request[sub](rest, io)
  throw new UsageError(`unknown command "request ${sub}"`)
}

export const explainHelp = `usage: adwire explain [webhook|request] --request FILE --jwks FILE [--now S] [verify options…]

Runs the verifier checklist on a request and prints each step, where and why verification stopped, and the
signature base it computed: what to reach for when a peer's signature does not verify. Takes the same
options as \`adwire webhook verify\` (webhook, the default) or \`adwire request verify\`.
Exit codes: 0 the signature verifies, 1 it does not, 2 bad usage.
`

export async function explainCommand(argv: string[], io: Io): Promise<number> {
  if (argv.length === 0 || argv.includes('--help') || argv.includes('-h')) {
    io.stdout(asTyped(explainHelp))
    return argv.length === 0 ? 2 : 0
  }
  return signatureCommands.explain(argv, io)
}

/**
 * Helpers for this app's service tests (not part of the build): the agent on a temporary SQLite file listening
 * on 127.0.0.1 port 0 and the briefs the tests send; the calls through the official MCP and A2A clients and the
 * official-schema check come from `@adwire/agent-test-kit`.
 */
import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Body } from '@adwire/agent-test-kit'
import { parseEnv } from './env.js'
import { startCreativeAgent, type RunningCreativeAgent, type StartOptions } from './service.js'

export * from '@adwire/agent-test-kit'

export const BUYER_TOKEN = 'buyer-token-for-creative-tests-0123456789'
export const READER_TOKEN = 'reader-token-for-creative-tests-0123456789'
export const TOKENS = `buyer-1:${BUYER_TOKEN}:read+write,reader-1:${READER_TOKEN}:read`

export const tempDir = (prefix = 'adwire-creative-') => mkdtempSync(join(tmpdir(), prefix))

/** The agent on 127.0.0.1, port 0, a fresh SQLite file, the test tokens, local webhooks allowed. */
export async function startTestAgent(
  env: Record<string, string> = {},
  options: StartOptions = {},
): Promise<RunningCreativeAgent> {
  return startCreativeAgent(
    parseEnv({
      PORT: '0',
      DATABASE_URL: `sqlite:${join(tempDir(), 'creative-agent.sqlite')}`,
      TOKENS,
      ALLOW_INSECURE_WEBHOOK_URLS: '1',
      ...env,
    }),
    { senderPollMs: 25, ...options },
  )
}

/** A format_id of `agent`'s catalog. */
export const fid = (agent: { publicUrl: string }, id: string) => ({ agent_url: agent.publicUrl, id })

/** A generation brief for `target` (promoted_offerings with brand colours and one offering). */
export function brief(agent: { publicUrl: string }, target = 'display_300x250_image'): Body {
  return {
    target_format_id: fid(agent, target),
    creative_manifest: {
      format_id: fid(agent, target),
      assets: {
        promoted_offerings: {
          brand_manifest: {
            name: 'Acme Coffee',
            url: 'https://acme.example/',
            colors: { primary: '#6B3E26', secondary: '#F2C14E' },
          },
          inline_offerings: [
            { name: 'Cold Brew Spring Sale', description: 'Two for one on every cold brew until May.' },
          ],
        },
      },
    },
  }
}

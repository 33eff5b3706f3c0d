/**
 * Test support (not exported): demo tasks and the agent server on a real HTTP server on 127.0.0.1.
 */
import type { AddressInfo } from 'node:net'
import { serve, type ServerType } from '@hono/node-server'
import { z } from 'zod'
import { defineTask } from '../define-task.js'
import { AgentError } from '../errors.js'
import { createAgentServer, type AgentServerOptions } from '../server.js'
import { hashedTokenAuth } from '../auth.js'

export const FormatId = z.object({ agent_url: z.url(), id: z.string() }).strict()

export const capabilities = defineTask({
  name: 'get_adcp_capabilities',
  description: 'Describes the agent',
  input: z.object({}).strict(),
  output: z.object({
    adcp: z.object({ major_versions: z.array(z.number()) }),
    supported_protocols: z.array(z.string()),
  }),
  access: 'public',
  handler: () => ({ adcp: { major_versions: [3] }, supported_protocols: ['creative'] }),
})

export const listFormats = defineTask({
  name: 'list_creative_formats',
  description: 'Lists formats',
  input: z
    .object({ format_ids: z.array(FormatId).optional(), max_results: z.number().int().max(100).optional() })
    .strict(),
  output: z.object({ formats: z.array(z.object({ format_id: FormatId, name: z.string() })) }),
  access: 'public',
  handler: ({ format_ids }, context) => ({
    formats: (format_ids ?? [{ agent_url: 'https://agent.example', id: 'display_300x250' }]).map(
      (format_id) => ({
        format_id,
        name: context.principal ? `${format_id.id} (for ${context.principal.principal_id})` : format_id.id,
      }),
    ),
  }),
})

/** Counts handler executions of build_creative, per message. */
export const executions = new Map<string, number>()

export const buildCreative = defineTask({
  name: 'build_creative',
  description: 'Builds a creative',
  input: z
    .object({
      idempotency_key: z.string(),
      target_format_id: FormatId,
      message: z.string().optional(),
      delay_ms: z.number().int().optional(),
    })
    .strict(),
  output: z.object({
    creative_manifest: z.object({ format_id: FormatId, assets: z.record(z.string(), z.unknown()) }),
  }),
  access: { resource: 'creatives', permission: 'write' },
  idempotent: true,
  handler: async (input, context) => {
    executions.set(input.message ?? '', (executions.get(input.message ?? '') ?? 0) + 1)
    if (input.delay_ms) await new Promise((resolve) => setTimeout(resolve, input.delay_ms))
    if (input.target_format_id.id === 'unknown')
      throw new AgentError('FORMAT_NOT_SUPPORTED', 'no such format', {
        field: 'target_format_id',
        status: 404,
      })
    if (input.message === 'crash') throw new Error('secret internal detail')
    const manifest = {
      format_id: input.target_format_id,
      assets: { headline: { content: input.message ?? 'hi' } },
    }
    if (input.message === 'async') {
      const taskId = `task_${crypto.randomUUID()}`
      setTimeout(() => {
        void (async () => {
          const updates = context.updates(taskId)
          await updates.update('working', { percentage: 50 })
          await updates.update('completed', { creative_manifest: manifest })
        })()
      }, 20)
      return { status: 'submitted', task_id: taskId, message: 'queued' } as const
    }
    return { creative_manifest: manifest }
  },
})

export const demoTasks = [capabilities, listFormats, buildCreative]

export const BUYER_TOKEN = 'buyer-token-0123456789abcdef'
export const READER_TOKEN = 'reader-token-0123456789abcdef'
export const tokens = hashedTokenAuth({
  [BUYER_TOKEN]: { principal_id: 'buyer-1', permissions: { creatives: ['read', 'write'] } },
  [READER_TOKEN]: { principal_id: 'reader-1', permissions: { creatives: ['read'] } },
})

export interface RunningAgent {
  readonly origin: string
  close(): Promise<void>
}

/** Starts the agent server on an ephemeral port of 127.0.0.1 (webhook URLs on local http allowed). */
export async function startAgent(
  options: Omit<AgentServerOptions, 'url' | 'name' | 'version' | 'tasks'> &
    Partial<Pick<AgentServerOptions, 'tasks'>>,
): Promise<RunningAgent> {
  let handler: (request: Request) => Promise<Response> = async () => new Response(null, { status: 503 })
  const server: ServerType = await new Promise((resolve) => {
    const started = serve({ fetch: (request) => handler(request), port: 0, hostname: '127.0.0.1' }, () =>
      resolve(started),
    )
  })
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  const agent = createAgentServer({
    tasks: demoTasks,
    name: 'demo-agent',
    version: '1.0.0',
    url: origin,
    // The buyer endpoints of the tests listen on 127.0.0.1 over http.
    allowInsecureWebhookUrls: true,
    ...options,
  })
  handler = (request) => agent.fetch(request)
  return {
    origin,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  }
}

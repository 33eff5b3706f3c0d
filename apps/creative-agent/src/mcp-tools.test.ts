/**
 * The creative agent's MCP tools as the official MCP SDK `Client` sees them (it validates `structuredContent`
 * against each tool's `outputSchema`): the full official request schemas as `inputSchema` (every request example
 * of the vendored storyboards that the official schema accepts, the tool accepts too), truthful annotations,
 * responses valid against the official response schemas, and `format_id.agent_url` as buyers send it.
 */
import { readFileSync } from 'node:fs'
import { conformancePath, listConformanceFiles } from '@adwire/conformance'
import { Ajv } from 'ajv'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { parse as parseYaml } from 'yaml'
import type { RunningCreativeAgent } from './service.js'
import {
  BUYER_TOKEN,
  brief,
  expectOfficial,
  fid,
  mcpClient,
  newKey,
  startTestAgent,
  type Body,
} from './test-support.js'
import { officialErrors } from '@adwire/conformance/official'

let agent: RunningCreativeAgent
let tools: Body[]

beforeAll(async () => {
  agent = await startTestAgent()
  const client = await mcpClient(agent)
  tools = (await client.listTools()).tools
  await client.close()
})
afterAll(() => agent.close())

const tool = (name: string) => tools.find((entry) => entry.name === name)

/** The official request schema file of each task. */
const REQUEST_SCHEMAS: Record<string, string> = {
  get_adcp_capabilities: 'protocol/get-adcp-capabilities-request.json',
  list_creative_formats: 'creative/list-creative-formats-request.json',
  build_creative: 'media-buy/build-creative-request.json',
  preview_creative: 'creative/preview-creative-request.json',
}

/** `$generate:uuid_v4#…` placeholders as a storyboard runner fills them (fresh UUIDs). */
function generated(value: unknown): Body {
  if (typeof value === 'string' && value.startsWith('$generate:uuid')) return crypto.randomUUID()
  if (Array.isArray(value)) return value.map(generated)
  if (typeof value === 'object' && value !== null)
    return Object.fromEntries(Object.entries(value).map(([key, child]) => [key, generated(child)]))
  return value
}

/** Every storyboard step's `sample_request` for the creative agent's tasks. */
function storyboardRequests(): { source: string; task: string; value: Body }[] {
  const out: { source: string; task: string; value: Body }[] = []
  const visit = (node: unknown, file: string, path: string) => {
    if (Array.isArray(node)) node.forEach((item, index) => visit(item, file, `${path}[${index}]`))
    else if (typeof node === 'object' && node !== null) {
      const step = node as Body
      if (typeof step.task === 'string' && step.task in REQUEST_SCHEMAS && step.sample_request !== undefined)
        out.push({ source: `${file} ${path}`, task: step.task, value: generated(step.sample_request) })
      for (const [key, child] of Object.entries(step)) visit(child, file, `${path}.${key}`)
    }
  }
  for (const file of listConformanceFiles('compliance/3.1.19', (name) => name.endsWith('.yaml')))
    visit(parseYaml(readFileSync(conformancePath('compliance/3.1.19', file), 'utf8')), file, '')
  return out
}

describe('MCP tools carry the whole spec', () => {
  it.each([
    [
      'build_creative',
      ['account', 'creative_id', 'quality', 'item_limit', 'macro_values', 'concept_id', 'brand'],
    ],
    ['preview_creative', ['creative_id', 'variant_id', 'quality', 'item_limit', 'request_type', 'requests']],
    ['list_creative_formats', ['account', 'input_format_ids', 'include_pricing', 'pagination', 'wcag_level']],
    ['get_adcp_capabilities', ['protocols', 'context']],
  ])('%s declares the official request fields', (name, fields) => {
    const schema = tool(name)!.inputSchema
    expect(schema.type).toBe('object')
    for (const field of fields) expect(schema.properties, field).toHaveProperty(field)
    expect(schema.properties).toHaveProperty('adcp_version')
  })

  it('annotates the tools truthfully', () => {
    for (const name of ['get_adcp_capabilities', 'list_creative_formats', 'preview_creative'])
      expect(tool(name)!.annotations).toMatchObject({ readOnlyHint: true, destructiveHint: false })
    expect(tool('build_creative')!.annotations).toMatchObject({
      readOnlyHint: false,
      destructiveHint: false,
      idempotentHint: true,
    })
  })

  it('answers every tool with structured content valid against its outputSchema and the official response schema', async () => {
    const client = await mcpClient(agent, BUYER_TOKEN) // the SDK client checks outputSchema on each call
    try {
      const call = async (name: string, args: Body) =>
        (await client.callTool({ name, arguments: args })).structuredContent as Body
      const caps = await call('get_adcp_capabilities', { protocols: ['creative'], adcp_version: '3.1' })
      expectOfficial('protocol/get-adcp-capabilities-response.json', caps)
      // Plain-http development default: no identity block (its brand_json_url must be https).
      expect(caps).not.toHaveProperty('identity')
      expect(caps.adcp_version).toBe('3.1')
      const listed = await call('list_creative_formats', { pagination: { max_results: 3 } })
      expectOfficial('creative/list-creative-formats-response.json', listed)
      const built = await call('build_creative', { idempotency_key: newKey(), ...brief(agent) })
      expectOfficial('media-buy/build-creative-response.json', built)
      const previewed = await call('preview_creative', {
        request_type: 'single',
        creative_manifest: built.creative_manifest,
      })
      expectOfficial('creative/preview-creative-response.json', previewed)
      const refused = await client.callTool({
        name: 'build_creative',
        arguments: { idempotency_key: newKey(), target_format_id: fid(agent, 'display_1x1_nothing') },
      })
      expect(refused.isError).toBe(true)
      expectOfficial('media-buy/build-creative-response.json', refused.structuredContent)
    } finally {
      await client.close()
    }
  })
})

describe('format_id.agent_url', () => {
  it('accepts the agent URL, its /mcp and /a2a endpoint URLs; FORMAT_NOT_SUPPORTED names the one expected', async () => {
    const client = await mcpClient(agent, BUYER_TOKEN)
    try {
      for (const suffix of ['', '/', '/mcp', '/a2a']) {
        const result = await client.callTool({
          name: 'build_creative',
          arguments: {
            idempotency_key: newKey(),
            ...brief({ publicUrl: `${agent.publicUrl}${suffix}` }, 'display_300x250_image'),
          },
        })
        expect(result.isError, suffix).toBeFalsy()
        expect((result.structuredContent as Body).creative_manifest.format_id).toEqual(
          fid(agent, 'display_300x250_image'),
        )
      }
      const foreign = await client.callTool({
        name: 'build_creative',
        arguments: {
          idempotency_key: newKey(),
          target_format_id: { agent_url: 'https://creative.elsewhere.example', id: 'display_300x250_image' },
        },
      })
      const error = (foreign.structuredContent as Body).adcp_error
      expect(error).toMatchObject({
        code: 'FORMAT_NOT_SUPPORTED',
        field: 'target_format_id',
        details: { expected_agent_url: agent.publicUrl },
      })
      expect(error.message).toContain(`agent_url ${agent.publicUrl}`)
    } finally {
      await client.close()
    }
  })
})

describe('tool input schemas and the storyboards', () => {
  it('accepts every storyboard request example the official schema accepts (and rejects what it must)', () => {
    const ajv = new Ajv({ strict: false, allErrors: true })
    const validators = new Map(tools.map((entry) => [entry.name, ajv.compile(entry.inputSchema)]))
    const counted: Record<string, number> = {}
    for (const { source, task, value } of storyboardRequests()) {
      // Samples with values from earlier steps ($context.…) that the official schema refuses are not examples.
      if (officialErrors(REQUEST_SCHEMAS[task]!, value).length > 0) continue
      const validate = validators.get(task)!
      expect(validate(value), `${source}: ${ajv.errorsText(validate.errors)}`).toBe(true)
      counted[task] = (counted[task] ?? 0) + 1
    }
    for (const task of Object.keys(REQUEST_SCHEMAS)) expect(counted[task], task).toBeGreaterThan(0)
    // What the spec refuses, the declared schema refuses too: a bare-string format_id, an unknown enum value.
    expect(validators.get('build_creative')!({ idempotency_key: newKey(), target_format_id: 'x' })).toBe(
      false,
    )
    expect(validators.get('preview_creative')!({ request_type: 'sometimes' })).toBe(false)
  })
})

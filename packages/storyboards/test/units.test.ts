/** The runner's parts: paths, placeholders, skip_if expressions and the check kinds. */
import { describe, expect, it } from 'vitest'
import { taskCompletion } from '../src/task-completion.js'
import type { RunContext } from '../src/run-context.js'
import { isErrorAnswer } from '../src/checks.js'
import { conventionalCaptures } from '../src/conventional-captures.js'
import { gradeValidation, type GradeInput } from '../src/grade.js'
import { evaluateExpression, parseExpression } from '../src/expression.js'
import { resolveAll, resolvePath } from '../src/path.js'
import { createSchemaValidator } from '../src/schemas.js'
import { loadBundle } from '../src/bundle.js'
import { substitute, UnresolvedSubstitution, type SubstitutionScope } from '../src/substitute.js'
import type { Validation } from '../src/types.js'

const bundle = loadBundle()
const schemas = createSchemaValidator(bundle.schemasDir!, bundle.version)
const body = {
  status: 'completed',
  formats: [{ format_id: { agent_url: 'https://a.example', id: 'x' } }, { format_id: { id: 'y' } }],
  specialisms: ['creative-template'],
  context: { correlation_id: 'c1' },
  pagination: { has_more: false, cursor: null },
}
const input = (extra: Partial<GradeInput> = {}): GradeInput => ({
  body,
  responseSchemaRef: undefined,
  context: new Map(),
  schemas,
  transport: 'mcp',
  http: { status: 200, headers: {} },
  agentUrl: 'https://agent.example',
  request: {},
  contributions: new Set(),
  controller: undefined,
  raw: undefined,
  transportError: false,
  ...extra,
})
const grade = (validation: Validation, extra: Partial<GradeInput> = {}) =>
  gradeValidation(validation, input(extra))

describe('paths', () => {
  it('resolves keys, indexes and wildcards, and rejects malformed paths', () => {
    expect(resolvePath(body, 'formats[0].format_id.id')).toBe('x')
    expect(resolvePath(body, 'formats[5].format_id')).toBeUndefined()
    expect(resolveAll(body, 'formats[*].format_id.id')).toEqual(['x', 'y'])
    expect(() => resolvePath(body, 'formats..id')).toThrow(/malformed/)
    expect(() => resolvePath(body, 'formats[*]')).toThrow(/wildcard/)
  })
})

describe('placeholders', () => {
  const scope = (): SubstitutionScope => ({
    agentUrl: 'http://127.0.0.1:1',
    context: new Map<string, unknown>([['fid', { agent_url: 'u', id: 'i' }]]),
    generated: new Map(),
    responses: new Map([['first', { pagination: { cursor: 'c2' } }]]),
    testKit: { auth: { probe_task: 'list_creatives' } },
    webhookUrl: (id) => `http://127.0.0.1:2/step/${id}/c1`,
  })

  it('mints one UUID per alias, injects captures typed, the kit, the receiver, and the agent for "your agent" URLs', () => {
    const out = substitute(
      {
        a: '$generate:uuid_v4#k',
        b: '$generate:uuid_v4#k',
        ids: ['$context.fid'],
        target: { agent_url: 'https://your-agent.example.com', id: 'x' },
        platform: 'https://your-platform.example.com',
        asset: 'https://your-agent.example.com/generated/1.jpg',
        cursor: '{{prior_step.first.pagination.cursor}}',
        task: '$test_kit.auth.probe_task',
        url: '{{runner.webhook_url:trigger}}',
      },
      scope(),
    )
    expect(out.a).toMatch(/^[0-9a-f-]{36}$/)
    expect(out.b).toBe(out.a)
    expect(out.ids).toEqual([{ agent_url: 'u', id: 'i' }])
    expect([out.target.agent_url, out.platform]).toEqual(['http://127.0.0.1:1', 'http://127.0.0.1:1'])
    expect(out.asset).toBe('https://your-agent.example.com/generated/1.jpg')
    expect([out.cursor, out.task, out.url]).toEqual([
      'c2',
      'list_creatives',
      'http://127.0.0.1:2/step/trigger/c1',
    ])
  })

  it('never lets an unresolved token through', () => {
    expect(() => substitute({ x: '$context.missing' }, scope())).toThrow(UnresolvedSubstitution)
    expect(() => substitute({ x: '{{runner.webhook_base}}' }, scope())).toThrow(UnresolvedSubstitution)
    expect(() => substitute({ x: 'a $test_kit.nope b' }, scope())).toThrow(UnresolvedSubstitution)
  })
})

describe('$build_assets_from_format', () => {
  const kit = bundle.testKits.get('test-kits/acme-outdoor.yaml')!
  const formats = {
    formats: [
      {
        format_id: { agent_url: 'https://agent.example', id: 'display_300x250' },
        assets: [
          {
            asset_id: 'image',
            asset_type: 'image',
            required: true,
            requirements: { min_width: 300, max_width: 300, min_height: 250, max_height: 250 },
          },
          { asset_id: 'click', asset_type: 'url', required: true },
          { asset_id: 'logo', asset_type: 'image', required: false },
        ],
      },
      {
        format_id: { id: 'audio_30s' },
        assets: [{ asset_id: 'audio', asset_type: 'audio', required: true }],
      },
    ],
  }
  const scope = (): SubstitutionScope => ({
    agentUrl: 'https://agent.example',
    context: new Map<string, unknown>([
      ['format_ref', { agent_url: 'https://agent.example', id: 'display_300x250' }],
      ['audio_ref', { id: 'audio_30s' }],
    ]),
    generated: new Map(),
    responses: new Map([['list_formats', formats]]),
    testKit: kit,
  })

  it('fills the required slots of the referenced format from the test kit', () => {
    const out = substitute(
      { creatives: [{ assets: { $build_assets_from_format: '$context.format_ref' } }] },
      scope(),
    )
    expect(out.creatives[0]!.assets).toEqual({
      image: {
        asset_type: 'image',
        url: expect.stringMatching(/^https:\/\/test-assets\.adcontextprotocol\.org\/.*300x250/),
        width: 300,
        height: 250,
      },
      click: { asset_type: 'url', url: 'https://acmeoutdoor.example/summer-sale' },
    })
  })

  it('fails before transport when a slot cannot be filled or the format is unknown', () => {
    expect(() =>
      substitute({ assets: { $build_assets_from_format: '$context.audio_ref' } }, scope()),
    ).toThrow(/audio slot audio/)
    const empty = { ...scope(), responses: new Map() }
    expect(() => substitute({ assets: { $build_assets_from_format: '$context.format_ref' } }, empty)).toThrow(
      UnresolvedSubstitution,
    )
  })
})

describe('skip_if expressions (every form the bundle uses)', () => {
  const scope = {
    context: new Map<string, unknown>([
      ['a', 'x'],
      ['b', 'x'],
      ['flag', false],
    ]),
    testKit: { kind: 'passthrough_only', auth: {} },
  }
  it.each([
    ['!test_kit.auth.api_key', true],
    ['!context.a || context.a == context.b', true],
    ['context.flag != false', false],
    ["test_kit.kind != 'passthrough_only'", false],
    ['context.supports_evaluator != true || !context.build_capability_id', true],
  ])('%s → %s', (source, expected) => {
    expect(evaluateExpression(parseExpression(source), scope)).toBe(expected)
  })
  it('refuses anything outside the grammar', () => {
    expect(() => parseExpression('context.a > 3')).toThrow()
    expect(() => parseExpression('process.exit()')).toThrow()
  })
})

describe('check kinds', () => {
  it('grades presence, absence, values, membership and patterns', async () => {
    expect((await grade({ check: 'field_present', path: 'formats[0].format_id.agent_url' })).passed).toBe(
      true,
    )
    expect((await grade({ check: 'field_present', path: 'formats[1].format_id.agent_url' })).passed).toBe(
      false,
    )
    expect((await grade({ check: 'field_absent', path: 'pagination.cursor' })).passed).toBe(true)
    expect((await grade({ check: 'field_value', path: 'context.correlation_id', value: 'c2' })).detail).toBe(
      'expected context.correlation_id = "c2", got "c1"',
    )
    expect((await grade({ check: 'field_value_or_absent', path: 'nope', value: 1 })).passed).toBe(true)
    expect(
      (await grade({ check: 'field_contains', path: 'specialisms[*]', value: 'creative-template' })).passed,
    ).toBe(true)
    expect(
      (await grade({ check: 'field_pattern', path: 'context.correlation_id', pattern: '^c\\d$' })).passed,
    ).toBe(true)
    expect((await grade({ check: 'envelope_field_present', path: 'status' })).passed).toBe(true)
    expect((await grade({ check: 'envelope_field_absent', path: 'task_status' })).passed).toBe(true)
  })

  it('reads the error code from adcp_error or errors[0]', async () => {
    expect(
      (await grade({ check: 'error_code', value: 'X' }, { body: { adcp_error: { code: 'X' } } })).passed,
    ).toBe(true)
    expect(
      (await grade({ check: 'error_code', allowed_values: ['Y'] }, { body: { errors: [{ code: 'Y' }] } }))
        .passed,
    ).toBe(true)
    expect((await grade({ check: 'error_code' })).passed).toBe(false)
  })

  it('grades HTTP status, 401 headers, the protected resource and branch contributions', async () => {
    expect((await grade({ check: 'http_status_in', allowed_values: [401, 403] })).detail).toBe(
      'expected HTTP status in [401,403], got 200',
    )
    expect(
      (
        await grade(
          { check: 'on_401_require_header', value: 'www-authenticate' },
          { http: { status: 401, headers: {} } },
        )
      ).passed,
    ).toBe(false)
    expect(
      (
        await grade(
          { check: 'resource_equals_agent_url' },
          { body: { resource: 'https://AGENT.example/mcp' } },
        )
      ).passed,
    ).toBe(true)
    expect(
      (await grade({ check: 'any_of', allowed_values: ['done'] }, { contributions: new Set(['done']) }))
        .passed,
    ).toBe(true)
  })

  it('resolves refs across steps (refs_resolve)', async () => {
    const validation = {
      check: 'refs_resolve',
      source: { from: 'context', path: 'products[*].format_ids[*]' },
      target: { from: 'current_step', path: 'formats[*].format_id' },
      match_keys: ['agent_url', 'id'],
    }
    const context = new Map<string, unknown>([
      ['products', [{ format_ids: [{ agent_url: 'https://a.example/', id: 'x' }] }]],
    ])
    expect((await grade(validation, { context })).passed).toBe(true)
    const missing = new Map<string, unknown>([
      ['products', [{ format_ids: [{ agent_url: 'https://a.example', id: 'z' }] }]],
    ])
    expect((await grade(validation, { context: missing })).detail).toMatch(/unresolved refs: .*"z"/)
  })

  it('validates response_schema with the official 3.1.19 schemas', async () => {
    const ref = { responseSchemaRef: 'protocol/get-adcp-capabilities-response.json' }
    expect(
      (await grade({ check: 'response_schema' }, { ...ref, body: { status: 'completed' } })).passed,
    ).toBe(false)
    const valid = {
      status: 'completed',
      adcp: { major_versions: [3], idempotency: { supported: false } },
      supported_protocols: ['creative'],
    }
    expect((await grade({ check: 'response_schema' }, { ...ref, body: valid })).passed).toBe(true)
  })

  it('grades upstream_traffic through the controller, and marks it not applicable without one', async () => {
    const controller = async () => ({
      recorded_calls: [
        { endpoint: 'POST https://up.example/audience/upload', payload: { users: [{ hashed_email: 'h1' }] } },
      ],
    })
    const check = {
      check: 'upstream_traffic',
      endpoint_pattern: 'POST */audience/upload',
      identifier_paths: ['audiences[*].hashed_email'],
    }
    expect(
      (await grade(check, { controller, request: { audiences: [{ hashed_email: 'h1' }] } })).passed,
    ).toBe(true)
    expect(
      (await grade(check, { controller, request: { audiences: [{ hashed_email: 'h2' }] } })).detail,
    ).toMatch(/h2 was not forwarded/)
    expect((await grade(check)).notApplicable).toMatch(/missing_test_controller/)
  })

  it('fails an unknown kind loudly, with its name', async () => {
    expect(await grade({ check: 'telepathy' })).toEqual({
      passed: false,
      detail: 'unknown check kind "telepathy": this runner does not grade it',
    })
  })
})

describe('conventional captures', () => {
  it('leave the id a task answers with under its conventional name, and nothing absent or empty', () => {
    expect(conventionalCaptures('create_media_buy', { media_buy_id: 'mb_1', status: 'completed' })).toEqual([
      ['media_buy_id', 'mb_1'],
    ])
    expect(
      conventionalCaptures('get_products', { products: [], proposals: [{ proposal_id: 'p1' }] }),
    ).toEqual([['proposal_id', 'p1']])
    expect(conventionalCaptures('get_products', { products: [] })).toEqual([])
    expect(conventionalCaptures('create_media_buy', { media_buy_id: '' })).toEqual([])
    expect(conventionalCaptures('list_creatives', { creatives: [{ creative_id: 'c' }] })).toEqual([])
  })
})

describe('expect_error', () => {
  it("counts the controller's ControllerError arm (success: false with an error code) as an error answer", () => {
    expect(isErrorAnswer({ success: false, error: 'FORBIDDEN', error_detail: 'live account' })).toBe(true)
    expect(isErrorAnswer({ errors: [{ code: 'INVALID_REQUEST', message: 'x' }] })).toBe(true)
    expect(isErrorAnswer({ adcp_error: { code: 'AUTH_MISSING', message: 'x' } })).toBe(true)
    expect(isErrorAnswer({ success: true, previous_state: 'a', current_state: 'b' })).toBe(false)
    expect(isErrorAnswer({ success: false })).toBe(false)
    expect(isErrorAnswer(undefined)).toBe(false)
  })
})

describe('task_completion captures', () => {
  /** A run whose get_task_status answers `statuses` in turn (the last one repeating). */
  const polling = (statuses: Record<string, unknown>[], tasks = ['get_task_status']) => {
    const calls: Record<string, unknown>[] = []
    const run = {
      profile: { tasks: new Set(tasks) },
      env: { stepTimeoutMs: 2_000 },
      call: async (task: string, request: Record<string, unknown>) => {
        calls.push({ task, ...request })
        return { body: statuses[Math.min(calls.length - 1, statuses.length - 1)] }
      },
    } as unknown as RunContext
    return { run, calls }
  }
  const step = { id: 'create', task: 'create_media_buy' }

  it('polls get_task_status until the task completes and reads its result', async () => {
    const { run, calls } = polling([
      { status: 'working' },
      { status: 'completed', result: { media_buy_id: 'mb_1' } },
    ])
    expect(await taskCompletion(run, { status: 'submitted', task_id: 't1' }, step)).toEqual({
      result: { media_buy_id: 'mb_1' },
    })
    expect(calls).toEqual([
      { task: 'get_task_status', task_id: 't1', include_result: true },
      { task: 'get_task_status', task_id: 't1', include_result: true },
    ])
  })

  it('names why there is no result: not pending, no poll task, a failed task', async () => {
    expect(await taskCompletion(polling([]).run, { status: 'completed' }, step)).toMatchObject({
      problem: expect.stringMatching(/not a pending task/),
    })
    const noTask = polling([], []).run
    expect(await taskCompletion(noTask, { status: 'submitted', task_id: 't' }, step)).toMatchObject({
      problem: expect.stringMatching(/no get_task_status/),
    })
    const failed = polling([{ status: 'failed' }]).run
    expect(await taskCompletion(failed, { status: 'submitted', task_id: 't' }, step)).toEqual({
      problem: 'task t ended failed',
    })
  })
})

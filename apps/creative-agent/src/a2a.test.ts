/**
 * The running creative agent over A2A, driven by the @a2a-js/sdk client from the agent card: the card, the
 * workflow with `{skill, input}` DataParts, errors as failed tasks carrying `adcp_error`, bearer and public
 * access. Every AdCP response is checked against the official 3.1.19 schemas.
 */
import { TaskState } from '@a2a-js/sdk'
import { a2aSendRequest, ADCP_A2A_EXTENSION } from '@adwire/agent-client'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { RunningCreativeAgent } from './service.js'
import {
  BUYER_TOKEN,
  READER_TOKEN,
  a2aSend,
  artifactData,
  brief,
  expectOfficial,
  fid,
  newKey,
  startTestAgent,
  type Body,
} from './test-support.js'

let agent: RunningCreativeAgent

beforeAll(async () => {
  agent = await startTestAgent()
})
afterAll(() => agent.close())

const failure = (task: Awaited<ReturnType<typeof a2aSend>>): Body => {
  expect(task.status?.state).toBe(TaskState.TASK_STATE_FAILED)
  const data = artifactData(task)
  const error = data.adcp_error
  expectOfficial('core/error.json', error)
  // The two-layer model: the same error in the payload errors[], with the envelope status.
  expect(data.errors).toEqual([error])
  expect(data.status).toBe('failed')
  return error
}

describe('A2A', () => {
  it('serves the agent card at both well-known paths with the four skills and the AdCP extension', async () => {
    for (const path of ['/.well-known/agent-card.json', '/.well-known/agent.json']) {
      const card = (await (await fetch(`${agent.url}${path}`)).json()) as Body
      expect(card.skills.map((skill: Body) => skill.id)).toEqual([
        'get_adcp_capabilities',
        'list_creative_formats',
        'build_creative',
        'preview_creative',
      ])
      expect(card.capabilities).toMatchObject({
        pushNotifications: true,
        extensions: [{ uri: ADCP_A2A_EXTENSION }],
      })
      expect(card.supportedInterfaces[0]).toMatchObject({
        url: `${agent.publicUrl}/a2a`,
        protocolBinding: 'JSONRPC',
      })
    }
  })

  it('runs list → build → preview with the AdCP response in the artifact DataPart', async () => {
    const context = { correlation_id: 'a2a-flow' }
    const listed = await a2aSend(agent, undefined, 'list_creative_formats', { type: 'video', context })
    expect(listed.status?.state).toBe(TaskState.TASK_STATE_COMPLETED)
    const formats = artifactData(listed)
    expectOfficial('creative/list-creative-formats-response.json', formats)
    expect(formats.context).toEqual(context)
    expect(formats.formats.every((f: Body) => f.type === 'video')).toBe(true)

    const built = await a2aSend(agent, BUYER_TOKEN, 'build_creative', {
      idempotency_key: newKey(),
      ...brief(agent, 'display_300x250_html'),
      context,
    })
    expect(built.status?.state).toBe(TaskState.TASK_STATE_COMPLETED)
    const build = artifactData(built)
    expectOfficial('media-buy/build-creative-response.json', build)
    expect(build.creative_manifest.format_id).toEqual(fid(agent, 'display_300x250_html'))

    const previewed = await a2aSend(agent, undefined, 'preview_creative', {
      request_type: 'single',
      creative_manifest: build.creative_manifest,
      output_format: 'url',
      context,
    })
    const preview = artifactData(previewed)
    expectOfficial('creative/preview-creative-response.json', preview)
    expect(preview.context).toEqual(context)
    const page = await fetch(preview.previews[0].renders[0].preview_url)
    expect(page.status).toBe(200)
    expect(await page.text()).toContain('<iframe')
  })

  it('answers get_adcp_capabilities publicly', async () => {
    const task = await a2aSend(agent, undefined, 'get_adcp_capabilities', {})
    expect(artifactData(task)).toMatchObject({ supported_protocols: ['creative'], status: 'completed' })
  })

  it('fails the task with adcp_error for auth, permission and validation errors', async () => {
    const args = () => ({
      idempotency_key: newKey(),
      ...brief(agent),
      context: { correlation_id: 'a2a-err' },
    })
    for (const [token, status] of [
      [undefined, 401],
      [READER_TOKEN, 403],
    ] as const) {
      const { headers, body } = a2aSendRequest({ skill: 'build_creative', input: args() })
      const response = await fetch(`${agent.url}/a2a`, {
        method: 'POST',
        headers: { ...headers, ...(token ? { authorization: `Bearer ${token}` } : {}) },
        body: JSON.stringify(body),
      })
      expect(response.status).toBe(status)
      expect(response.headers.get('www-authenticate')).toBe(
        status === 401 ? `Bearer realm="${agent.publicUrl}/a2a"` : null,
      )
      const answer = (await response.json()) as Body
      expect(answer.error.data.adcp_error.code).toBe(
        status === 401 ? 'AUTH_MISSING' : 'INSUFFICIENT_PERMISSIONS',
      )
    }
    const bare = await a2aSend(agent, BUYER_TOKEN, 'build_creative', {
      ...args(),
      target_format_id: 'display_300x250_image',
    })
    expect(failure(bare)).toMatchObject({ code: 'INVALID_FORMAT_ID', field: 'target_format_id' })
    expect(artifactData(bare).context).toEqual({ correlation_id: 'a2a-err' })
    const unsupported = await a2aSend(agent, BUYER_TOKEN, 'build_creative', {
      ...args(),
      target_format_id: fid(agent, 'display_1x1_nothing'),
    })
    expect(failure(unsupported)).toMatchObject({ code: 'FORMAT_NOT_SUPPORTED', field: 'target_format_id' })
    expectOfficial('media-buy/build-creative-response.json', artifactData(unsupported))
    expect(failure(await a2aSend(agent, undefined, 'no_such_skill', {})).code).toBe('INVALID_REQUEST')
  })

  it('replays build_creative by idempotency_key over A2A too', async () => {
    const input = { idempotency_key: newKey(), ...brief(agent) }
    const first = artifactData(await a2aSend(agent, BUYER_TOKEN, 'build_creative', input))
    const second = artifactData(await a2aSend(agent, BUYER_TOKEN, 'build_creative', input))
    expect(second).toEqual({ ...first, replayed: true })
  })
})

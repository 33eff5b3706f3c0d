/** The compliance rules of `domain/`: settings changes, refresh throttle and run decision, credential checks. */
import { describe, expect, it } from 'vitest'
import type { AgentSettings } from '../compliance/status-store.js'
import { intervalChange, optOutChange, pauseChange, requeueChange } from './agent-settings.js'
import { clientCredentialsOf, CredentialFieldError } from './client-credentials.js'
import { createRefreshThrottle, refreshRunDecision } from './refresh-policy.js'

const NOW = Date.parse('2026-03-01T12:00:00.000Z')
const settings = (overrides: Partial<AgentSettings> = {}): AgentSettings => ({
  agentUrl: 'https://agent.example/mcp',
  lifecycleStage: 'development',
  optOut: false,
  requalifySince: null,
  paused: false,
  pausedAt: null,
  intervalHours: 24,
  lastCheckedAt: null,
  nextCheckAt: null,
  lastStatus: null,
  statusChangedAt: null,
  createdAt: '2026-01-01T00:00:00.000Z',
  updatedAt: '2026-01-01T00:00:00.000Z',
  stored: true,
  ...overrides,
})

describe('agent settings changes', () => {
  it('changes opt-out and pause only when they differ, stamping now', () => {
    expect(optOutChange(false, settings(), NOW)).toEqual({})
    expect(optOutChange(true, settings(), NOW)).toEqual({
      optOut: true,
      requalifySince: '2026-03-01T12:00:00.000Z',
    })
    expect(pauseChange(true, settings(), NOW)).toEqual({ paused: true, pausedAt: '2026-03-01T12:00:00.000Z' })
    expect(pauseChange(false, settings({ paused: true }), NOW)).toEqual({ paused: false, pausedAt: null })
  })

  it('moves the next heartbeat with the interval unless the agent was never checked', () => {
    expect(intervalChange(6, settings({ lastCheckedAt: '2026-03-01T00:00:00.000Z' }))).toEqual({
      intervalHours: 6,
      nextCheckAt: '2026-03-01T06:00:00.000Z',
    })
    expect(intervalChange(6, settings({ nextCheckAt: null }))).toEqual({
      intervalHours: 6,
      nextCheckAt: null,
    })
    expect(requeueChange()).toEqual({ lastCheckedAt: null, nextCheckAt: null })
  })
})

describe('refresh policy', () => {
  it('allows one refresh a minute per agent, case-insensitively', () => {
    const throttle = createRefreshThrottle()
    expect(throttle.take('https://Agent.example/mcp', NOW)).toBeUndefined()
    expect(throttle.take('https://agent.example/mcp', NOW + 59_500)).toBe(1)
    expect(throttle.take('https://agent.example/mcp', NOW + 1_000)).toBe(59)
    expect(throttle.take('https://agent.example/mcp', NOW + 60_000)).toBeUndefined()
  })

  it('starts a run only with a runner and, when the agent asks for it, saved credentials', () => {
    expect(refreshRunDecision({ hasRunner: false, oauthRequired: false, hasAuth: true })).toBe('no_runner')
    expect(refreshRunDecision({ hasRunner: true, oauthRequired: true, hasAuth: false })).toBe('auth_required')
    expect(refreshRunDecision({ hasRunner: true, oauthRequired: true, hasAuth: true })).toBe('run')
  })
})

describe('client credentials', () => {
  const valid = {
    token_endpoint: 'https://auth.example/token',
    client_id: 'id',
    client_secret: '$ENV:SECRET',
  }
  const problem = (body: unknown, allowPrivate = false) => {
    try {
      clientCredentialsOf(body, allowPrivate)
    } catch (error) {
      if (error instanceof CredentialFieldError) return [error.code, error.field]
      throw error
    }
    return undefined
  }

  it('accepts a valid configuration and keeps only its fields', () => {
    expect(
      clientCredentialsOf({ ...valid, resource: ['https://api.example'], organization_id: 'o' }, false),
    ).toEqual({
      ...valid,
      resource: ['https://api.example'],
    })
  })

  it('names the code and field of each problem', () => {
    expect(problem([])).toEqual(['invalid_blob_shape', 'oauth_client_credentials'])
    expect(problem({ ...valid, client_id: undefined })).toEqual(['missing_field', 'client_id'])
    expect(problem({ ...valid, token_endpoint: 'http://auth.example/token' })).toEqual([
      'invalid_url',
      'token_endpoint',
    ])
    expect(problem({ ...valid, token_endpoint: 'http://localhost:9/token' }, true)).toBeUndefined()
    expect(problem({ ...valid, client_secret: '$ENV:1BAD' })).toEqual([
      'invalid_env_reference',
      'client_secret',
    ])
    expect(problem({ ...valid, resource: [] })).toEqual(['array_too_few', 'resource'])
    expect(problem({ ...valid, auth_method: 'jwt' })).toEqual(['invalid_auth_method_value', 'auth_method'])
    expect(problem({ ...valid, scope: 'x'.repeat(1025) })).toEqual(['field_too_long', 'scope'])
  })
})

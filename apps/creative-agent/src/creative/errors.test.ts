import { AgentError } from '@adwire/agent-server'
import { FormatsError, type FormatsErrorCode } from '@adwire/formats'
import { AdcpErrorSchema, SchemaError } from '@adwire/schemas'
import { describe, expect, it } from 'vitest'
import { CreativeError, errorResponse, type CreativeErrorCode } from './errors.js'

const CODES: readonly CreativeErrorCode[] = [
  'INVALID_REQUEST',
  'INVALID_FORMAT_ID',
  'FORMAT_NOT_SUPPORTED',
  'VALIDATION_ERROR',
  'UNSUPPORTED_FEATURE',
  'INTERNAL_ERROR',
]

describe('CreativeError', () => {
  it('agrees with AgentError on every status and recovery class (one table)', () => {
    for (const code of CODES) {
      const creative = new CreativeError(code, 'x')
      const agent = new AgentError(code, 'x')
      expect([creative.status, creative.recovery], code).toEqual([agent.status, agent.recovery])
    }
    // The error-code catalogue (enums/error-code.json enumMetadata): UNSUPPORTED_FEATURE is correctable; a
    // well-formed request the agent cannot honour is 422. INTERNAL_ERROR is not retried blindly: terminal, 500.
    expect(new CreativeError('UNSUPPORTED_FEATURE', 'x')).toMatchObject({
      status: 422,
      recovery: 'correctable',
    })
    expect(new CreativeError('INTERNAL_ERROR', 'x')).toMatchObject({ status: 500, recovery: 'terminal' })
  })

  it('has the house shape: a brand, static is, and it is an AgentError', () => {
    const error = new CreativeError('FORMAT_NOT_SUPPORTED', 'no such format', { field: 'target_format_id' })
    expect(error.name).toBe('CreativeError')
    expect(CreativeError.is(error)).toBe(true)
    expect(AgentError.is(error)).toBe(true)
    expect(CreativeError.is(new AgentError('INVALID_REQUEST', 'x'))).toBe(false)
    // Another copy of the module (another realm) is recognised by its brand, not by instanceof.
    expect(CreativeError.is({ [Symbol.for('@adwire/app-creative-agent/CreativeError')]: true })).toBe(true)
    expect(CreativeError.is(new Error('x'))).toBe(false)
  })

  it('renders the generated core/error.json type, and wraps whatever was thrown', () => {
    const wire = new CreativeError('VALIDATION_ERROR', 'bad manifest', { field: 'assets.hero' }).toAdcpError()
    expect(AdcpErrorSchema.parse(wire)).toEqual({
      code: 'VALIDATION_ERROR',
      message: 'bad manifest',
      field: 'assets.hero',
      recovery: 'correctable',
    })
    const schema = new SchemaError('INVALID_FORMAT_ID', 'not an object', [
      { path: 'format_id', message: 'x' },
    ])
    expect(CreativeError.from(schema).toAdcpError()).toMatchObject({
      code: 'INVALID_FORMAT_ID',
      field: 'format_id',
    })
    const agent = new AgentError('INVALID_REQUEST', 'bad webhook URL')
    expect(CreativeError.from(agent)).toBe(agent)
    const internal = errorResponse(new TypeError('secret detail'), { context: { run: 1 } })
    expect(internal).toEqual({
      status: 'failed',
      errors: [{ code: 'INTERNAL_ERROR', message: 'internal error', recovery: 'terminal' }],
      context: { run: 1 },
    })
  })

  it('maps every FormatsError code to a CreativeError with the AgentError status and recovery', () => {
    const codes: readonly FormatsErrorCode[] = [
      'INVALID_REQUEST',
      'INVALID_FORMAT_ID',
      'FORMAT_NOT_SUPPORTED',
      'VALIDATION_ERROR',
    ]
    for (const code of codes) {
      const formats = new FormatsError(code, 'x', { field: 'format_ids[0]', details: { n: 1 } })
      const mapped = CreativeError.from(formats)
      const agent = new AgentError(code, 'x')
      expect(CreativeError.is(mapped), code).toBe(true)
      expect([formats.status, formats.recovery], code).toEqual([agent.status, agent.recovery])
      expect(mapped, code).toMatchObject({
        code,
        field: 'format_ids[0]',
        details: { n: 1 },
        status: agent.status,
        recovery: agent.recovery,
        cause: formats,
      })
    }
  })
})

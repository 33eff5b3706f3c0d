import { describe, expect, it } from 'vitest'
import { z } from 'zod'
import {
  EnvError,
  flag,
  httpFields,
  httpLimits,
  intIn,
  optionalHttpUrl,
  readEnv,
  serviceFields,
  serviceSettings,
} from './index.js'

const Schema = z.object({
  ...serviceFields({ name: 'creative-agent', port: 4200 }),
  SEED: flag(true),
  QUIET: flag(),
  LIMIT: intIn('LIMIT', 1, 10, 5),
  DOWNSTREAM_URL: optionalHttpUrl('DOWNSTREAM_URL'),
})
const read = (source: Record<string, string | undefined>) => readEnv(Schema, source)

describe('serviceFields and serviceSettings', () => {
  it('default to the service port and its SQLite file', () => {
    const values = read({})
    expect(serviceSettings(values)).toEqual({
      port: 4200,
      database: { kind: 'sqlite', path: './data/creative-agent.sqlite' },
    })
    expect(values).toMatchObject({ SEED: true, QUIET: false, LIMIT: 5 })
    expect(values.DOWNSTREAM_URL).toBeUndefined()
  })

  it('read PostgreSQL with the default schema, the host and a public URL without trailing slashes', () => {
    const values = read({
      PORT: '8080',
      HOST: ' 127.0.0.1 ',
      DATABASE_URL: 'postgres://postgres@127.0.0.1:5432/test',
      PUBLIC_URL: 'https://agent.example/base//',
    })
    expect(serviceSettings(values)).toEqual({
      port: 8080,
      host: '127.0.0.1',
      database: {
        kind: 'postgres',
        connectionString: 'postgres://postgres@127.0.0.1:5432/test',
        schema: 'adwire_creative_agent',
      },
      publicUrl: 'https://agent.example/base',
    })
  })

  it('read flags, bounded numbers and optional URLs', () => {
    expect(
      read({ SEED: 'no', QUIET: 'yes', LIMIT: '10', DOWNSTREAM_URL: 'http://a.example/x' }),
    ).toMatchObject({
      SEED: false,
      QUIET: true,
      LIMIT: 10,
      DOWNSTREAM_URL: 'http://a.example/x',
    })
    const blank = read({ SEED: '', LIMIT: '', DOWNSTREAM_URL: ' ' })
    expect(blank).toMatchObject({ SEED: true, LIMIT: 5 })
    expect(blank.DOWNSTREAM_URL).toBeUndefined()
  })

  it('name every bad variable in one EnvError, never repeating a value', () => {
    let error: unknown
    try {
      read({
        PORT: '70000',
        DATABASE_URL: 'mysql://secret-password@db',
        DATABASE_SCHEMA: 'pg_catalog',
        PUBLIC_URL: 'https://a.example/?q=1',
        SEED: 'maybe',
        LIMIT: '2.5',
        DOWNSTREAM_URL: 'ftp://a.example',
      })
    } catch (caught) {
      error = caught
    }
    expect(error).toBeInstanceOf(EnvError)
    const message = (error as EnvError).message
    for (const name of [
      'PORT',
      'DATABASE_URL',
      'DATABASE_SCHEMA',
      'PUBLIC_URL',
      'SEED',
      'LIMIT',
      'DOWNSTREAM_URL',
    ]) {
      expect(message).toMatch(new RegExp(`^  ${name}: `, 'm'))
    }
    expect(message).not.toContain('secret-password')
    expect((error as EnvError).name).toBe('EnvError')
  })

  it('refuse a schema name that is not a plain lowercase identifier', () => {
    expect(() => read({ DATABASE_SCHEMA: 'Bad-Name' })).toThrow(/DATABASE_SCHEMA must be a plain lowercase/)
  })
})

describe('httpFields and httpLimits', () => {
  const Http = z.object(httpFields())
  it('leave unset limits out (listen keeps its defaults) and read the set ones', () => {
    expect(httpLimits(readEnv(Http, {}))).toEqual({})
    expect(
      httpLimits(
        readEnv(Http, {
          HTTP_HEADERS_TIMEOUT_MS: '5000',
          HTTP_REQUEST_TIMEOUT_MS: ' 60000 ',
          HTTP_KEEP_ALIVE_TIMEOUT_MS: '',
          HTTP_MAX_CONNECTIONS: '4000',
        }),
      ),
    ).toEqual({ headersTimeoutMs: 5000, requestTimeoutMs: 60_000, maxConnections: 4000 })
  })

  it('name each bad limit', () => {
    expect(() => readEnv(Http, { HTTP_MAX_CONNECTIONS: '0', HTTP_REQUEST_TIMEOUT_MS: 'soon' })).toThrow(
      /HTTP_REQUEST_TIMEOUT_MS: HTTP_REQUEST_TIMEOUT_MS must be a whole number[\s\S]*HTTP_MAX_CONNECTIONS: HTTP_MAX_CONNECTIONS must be a whole number from 1/,
    )
  })
})

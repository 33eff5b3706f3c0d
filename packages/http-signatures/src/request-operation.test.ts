import { describe, expect, it } from 'vitest'
import { describeRequestOperation } from './request-operation.js'

const at = (url: string, body?: unknown) => ({
  method: 'POST',
  url,
  headers: {},
  ...(body === undefined ? {} : { body: typeof body === 'string' ? body : JSON.stringify(body) }),
})

describe('describeRequestOperation', () => {
  it('takes the last path segment for plain AdCP calls', () => {
    expect(describeRequestOperation(at('https://s.example/adcp/create_media_buy?x=1', {}))).toEqual({
      operation: 'create_media_buy',
      registersAuthentication: false,
    })
    expect(describeRequestOperation(at('https://s.example/'))).toEqual({ registersAuthentication: false })
  })

  it('keeps the two JSON-RPC namespaces apart', () => {
    expect(
      describeRequestOperation(
        at('https://s.example/mcp', {
          jsonrpc: '2.0',
          method: 'tools/call',
          params: { name: 'sync_creatives' },
        }),
      ),
    ).toMatchObject({
      operation: 'sync_creatives',
    })
    expect(
      describeRequestOperation(at('https://s.example/mcp', { jsonrpc: '2.0', method: 'tasks/cancel' })),
    ).toEqual({
      protocolMethod: 'tasks/cancel',
      registersAuthentication: false,
    })
  })

  it('finds legacy authentication in webhook registrations, wherever the arguments sit', () => {
    const push = {
      push_notification_config: { url: 'https://b.example', authentication: { schemes: ['HMAC-SHA256'] } },
    }
    expect(
      describeRequestOperation(at('https://s.example/adcp/update_media_buy', push)).registersAuthentication,
    ).toBe(true)
    const mcp = {
      jsonrpc: '2.0',
      method: 'tools/call',
      params: { name: 'create_media_buy', arguments: push },
    }
    expect(describeRequestOperation(at('https://s.example/mcp', mcp)).registersAuthentication).toBe(true)
    const plain = { push_notification_config: { url: 'https://b.example', authentication: null } }
    expect(
      describeRequestOperation(at('https://s.example/adcp/update_media_buy', plain)).registersAuthentication,
    ).toBe(false)
    expect(describeRequestOperation(at('https://s.example/adcp/x', 'not json')).registersAuthentication).toBe(
      false,
    )
  })

  it('lets the caller name the operation', () => {
    expect(describeRequestOperation(at('https://s.example/a2a', {}), 'create_media_buy')).toMatchObject({
      operation: 'create_media_buy',
    })
    expect(describeRequestOperation(at('https://s.example/a2a', {}), 'tasks/get')).toMatchObject({
      protocolMethod: 'tasks/get',
    })
  })
})

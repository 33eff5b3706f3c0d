import { describe, expect, it } from 'vitest'
import { a2aInvocationData, a2aResponseData, a2aSendRequest } from './a2a-message.js'
import { ADCP_A2A_EXTENSION } from './extension.js'

describe('a2aSendRequest', () => {
  it('builds an A2A 1.0 SendMessage with one {skill, input} DataPart and the extension activated', () => {
    const { headers, body } = a2aSendRequest({
      skill: 'list_creative_formats',
      input: { type: 'display' },
      id: 'x',
    })
    expect(headers).toMatchObject({ 'a2a-version': '1.0', 'a2a-extensions': ADCP_A2A_EXTENSION })
    expect(body).toMatchObject({
      jsonrpc: '2.0',
      id: 'x',
      method: 'SendMessage',
      params: {
        message: {
          role: 'ROLE_USER',
          parts: [{ data: { skill: 'list_creative_formats', input: { type: 'display' } } }],
        },
      },
    })
    expect(body.params).not.toHaveProperty('configuration')
  })

  it('builds an A2A 0.3 message/send with kind-tagged parts and the configuration as given', () => {
    const configuration = { pushNotificationConfig: { url: 'https://buyer.example/hook' } }
    const { headers, body } = a2aSendRequest({
      skill: 'build_creative',
      input: {},
      version: '0.3',
      configuration,
    })
    expect(headers['a2a-version']).toBe('0.3')
    expect(body).toMatchObject({
      method: 'message/send',
      params: { message: { kind: 'message', role: 'user', parts: [{ kind: 'data' }] }, configuration },
    })
  })
})

describe('a2aResponseData', () => {
  const data = { formats: [] }
  it('reads the DataPart of a 1.0 task and of a 0.3 result', () => {
    expect(
      a2aResponseData({ result: { task: { artifacts: [{ parts: [{ text: 'hi' }, { data }] }] } } }),
    ).toEqual(data)
    expect(a2aResponseData({ result: { artifacts: [{ parts: [{ kind: 'data', data }] }] } })).toEqual(data)
  })

  it('throws on a JSON-RPC error, a non-object and a task without data', () => {
    expect(() => a2aResponseData({ error: { code: -32601, message: 'Method not found' } })).toThrow(/-32601/)
    expect(() => a2aResponseData('nope')).toThrow(/not a JSON-RPC response/)
    expect(() => a2aResponseData({ result: { task: { artifacts: [] } } })).toThrow(/no data part/)
  })
})

describe('a2aInvocationData', () => {
  it('is {skill, input} to an A2A 1.0 agent and adds parameters for 0.3', () => {
    expect(a2aInvocationData('get_products', { brief: 'x' })).toEqual({
      skill: 'get_products',
      input: { brief: 'x' },
    })
    expect(a2aInvocationData('get_products', { brief: 'x' }, '0.3')).toEqual({
      skill: 'get_products',
      input: { brief: 'x' },
      parameters: { brief: 'x' },
    })
  })
})

/**
 * The A2A Agent Card, for A2A 1.0 and 0.3 clients at once: the 1.0 `supportedInterfaces` (a 1.0 and a 0.3
 * JSON-RPC interface) beside the 0.3 top-level `url`, `preferredTransport`, `protocolVersion` and
 * `additionalInterfaces`; the bearer scheme in both shapes (0.3 `{type, scheme}`, 1.0 `httpAuthSecurityScheme`)
 * with the 0.3 `security` and 1.0 `securityRequirements`, per skill too. Skills are the tasks (`id` = AdCP task
 * name); the AdCP extension sits under `capabilities.extensions` without params (a2a-profile-extension-v3).
 */
import type { AgentCard } from '@a2a-js/sdk'
import { ADCP_A2A_EXTENSION } from './a2a.js'
import type { AnyTask } from './types.js'

export interface AgentCardOptions {
  readonly name: string
  readonly description: string
  readonly version: string
  /** The agent's public base URL; the A2A endpoint is `{url}/a2a`. */
  readonly url: string
  readonly tasks: readonly AnyTask[]
  readonly pushNotifications: boolean
  readonly requireExtension: boolean
  /** Whether bearer credentials are accepted (protected skills then declare the scheme). */
  readonly bearer: boolean
}

/** The name of the bearer scheme in `securitySchemes`. */
export const BEARER_SCHEME = 'bearer'

const BEARER_DESCRIPTION =
  'Authorization: Bearer <token> (an opaque API key or a JWT); needed by the skills that list it'

/** The card as served (JSON): valid for A2A 1.0 and 0.3 clients. */
export function agentCardJson(options: AgentCardOptions): Record<string, unknown> {
  const endpoint = `${options.url.replace(/\/$/, '')}/a2a`
  const bearer0_3 = [{ [BEARER_SCHEME]: [] as string[] }]
  const bearer1_0 = [{ schemes: { [BEARER_SCHEME]: { list: [] as string[] } } }]
  const anonymous0_3 = [{}]
  const anonymous1_0 = [{ schemes: {} }]
  return {
    name: options.name,
    description: options.description,
    version: options.version,
    // A2A 1.0
    supportedInterfaces: ['1.0', '0.3'].map((protocolVersion) => ({
      url: endpoint,
      protocolBinding: 'JSONRPC',
      protocolVersion,
    })),
    // A2A 0.3
    protocolVersion: '0.3.0',
    url: endpoint,
    preferredTransport: 'JSONRPC',
    additionalInterfaces: [{ url: endpoint, transport: 'JSONRPC' }],
    capabilities: {
      streaming: false,
      pushNotifications: options.pushNotifications,
      extensions: [
        {
          uri: ADCP_A2A_EXTENSION,
          description: 'AdCP structured task invocation profile',
          required: options.requireExtension,
        },
      ],
    },
    ...(options.bearer
      ? {
          securitySchemes: {
            [BEARER_SCHEME]: {
              type: 'http',
              scheme: 'bearer',
              description: BEARER_DESCRIPTION,
              httpAuthSecurityScheme: { scheme: 'Bearer', description: BEARER_DESCRIPTION },
            },
          },
          security: bearer0_3,
          securityRequirements: bearer1_0,
        }
      : {}),
    defaultInputModes: ['application/json'],
    defaultOutputModes: ['application/json'],
    skills: options.tasks.map((task) => {
      const open = task.access === 'public'
      return {
        id: task.name,
        name: task.name,
        description: task.description,
        tags: ['adcp', open ? 'public' : `${task.access.resource}:${task.access.permission}`],
        examples: [],
        inputModes: ['application/json'],
        outputModes: ['application/json'],
        ...(options.bearer
          ? {
              security: open ? anonymous0_3 : bearer0_3,
              securityRequirements: open ? anonymous1_0 : bearer1_0,
            }
          : {}),
      }
    }),
  }
}

/** The card in the SDK's model, for its request handler (version checks, the extended card). */
export function agentCardModel(options: AgentCardOptions): AgentCard {
  const endpoint = `${options.url.replace(/\/$/, '')}/a2a`
  return {
    name: options.name,
    description: options.description,
    version: options.version,
    supportedInterfaces: ['1.0', '0.3'].map((protocolVersion) => ({
      url: endpoint,
      protocolBinding: 'JSONRPC',
      tenant: '',
      protocolVersion,
    })),
    provider: undefined,
    capabilities: {
      streaming: false,
      pushNotifications: options.pushNotifications,
      extensions: [
        { uri: ADCP_A2A_EXTENSION, description: '', required: options.requireExtension, params: undefined },
      ],
    },
    securitySchemes: {},
    securityRequirements: [],
    defaultInputModes: ['application/json'],
    defaultOutputModes: ['application/json'],
    skills: options.tasks.map((task) => ({
      id: task.name,
      name: task.name,
      description: task.description,
      tags: ['adcp'],
      examples: [],
      inputModes: ['application/json'],
      outputModes: ['application/json'],
      securityRequirements: [],
    })),
    signatures: [],
  }
}

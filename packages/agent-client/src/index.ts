export {
  a2aInvocationData,
  a2aResponseData,
  a2aSendRequest,
  type A2ASendRequestOptions,
  type A2AVersion,
} from './a2a-message.js'
export { getAgentCapabilities, type AgentCapabilitiesOptions } from './capabilities.js'
export { assertAgentUrl, connectAgent, type ConnectOptions } from './connect.js'
export type { AgentConnection, AgentDescription, CallOptions } from './connection.js'
export { agentEndpoint, type AgentEndpoint, type Protocol } from './endpoint.js'
export { AgentClientError, type AgentClientErrorCode } from './errors.js'
export { ADCP_A2A_EXTENSION } from './extension.js'
export { boundedFetch, capResponseSize, withTimeout, type BoundedFetchOptions } from './limits.js'
export { probeAgent, type ProbeOptions, type ProbeResult } from './probe.js'
export { adcpError, type TaskResult } from './result.js'

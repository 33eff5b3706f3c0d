/**
 * The AdCP A2A profile extension URI (a2a-profile-extension.mdx): activated by a client on every message
 * (`A2A-Extensions` header), advertised by an agent in its card.
 *
 * @example
 * client.sendMessage(params, { serviceParameters: ServiceParameters.create(withA2AExtensions(ADCP_A2A_EXTENSION)) })
 */
export const ADCP_A2A_EXTENSION = 'https://adcontextprotocol.org/extensions/adcp/v3'

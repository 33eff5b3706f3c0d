/** Shorthands over the generated OpenAPI types. */
import type { components, operations } from './generated/registry.js'

/** Every component schema of the registry OpenAPI document, by name. */
export type Schemas = components['schemas']

type JsonContent<Response> = Response extends { content: { 'application/json': infer Body } } ? Body : never

/** The JSON body an operation answers with `Status` (200 unless given). */
export type OperationResponse<
  Op extends keyof operations,
  Status extends keyof operations[Op]['responses'] = 200 extends keyof operations[Op]['responses']
    ? 200
    : never,
> = JsonContent<operations[Op]['responses'][Status]>

/** The JSON request body of an operation. */
export type OperationBody<Op extends keyof operations> = operations[Op] extends {
  requestBody?: { content: { 'application/json': infer Body } }
}
  ? Body
  : never

/** The query parameters of an operation. */
export type OperationQuery<Op extends keyof operations> = operations[Op]['parameters'] extends {
  query?: infer Query
}
  ? NonNullable<Query>
  : never

export type ResolvedBrand = Schemas['ResolvedBrand']
export type ResolvedProperty = Schemas['ResolvedProperty']
export type AdagentsValidationResult = Schemas['AdagentsValidationResult']
export type AdagentsAuthorizedAgent = Schemas['AdagentsAuthorizedAgent']
export type MemberAgent = Schemas['MemberAgent']
export type MemberAgentInput = Schemas['MemberAgentInput']
export type MemberAgentPatch = Schemas['MemberAgentPatch']
export type MemberAgentResponse = Schemas['MemberAgentResponse']
export type CreateOrganizationInput = Schemas['CreateOrganizationInput']
export type FederatedAgentWithDetails = Schemas['FederatedAgentWithDetails']
export type FederatedPublisher = Schemas['FederatedPublisher']
export type PublisherLookupResult = Schemas['PublisherLookupResult']
export type DomainLookupResult = Schemas['DomainLookupResult']
export type RegistryFeedEvent = Schemas['RegistryFeedEvent']
/** The 20 change-feed event types (`agent.discovered`, `authorization.granted`, …). */
export type FeedEventType = RegistryFeedEvent['event_type']

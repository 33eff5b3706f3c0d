/**
 * @adwire/registry-client: a typed client of the AdCP registry REST API (types generated from its OpenAPI
 * document, with documented corrections) and a change-feed follower that resumes from a stored cursor.
 */
export { createRegistryClient } from './client.js'
export type {
  FeedQuery,
  FeedStreamQuery,
  RawRequest,
  RegistryClient,
  RegistryClientOptions,
} from './client.js'
export { CursorExpiredError, RegistryError } from './errors.js'
export { followFeed, isTransient } from './feed.js'
export type { CursorStore, FollowFeedOptions } from './feed.js'
export type * from './overrides.js'
export type * from './types.js'
export type { components, operations, paths } from './generated/registry.js'
export { readSse, type SseMessage } from './sse.js'

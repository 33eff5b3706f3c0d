/**
 * What the services' tests share (`@adwire/service-kit/testing`, for tests only: it asserts with vitest and is not
 * part of the build).
 */
export { jsonAnswer } from './json-answer.js'
export { streamUntilAnswered, type StreamOutcome } from './stream-until-answered.js'

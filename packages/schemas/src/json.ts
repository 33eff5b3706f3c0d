/**
 * `@adwire/schemas/json`: the JSON shape guard every adwire package uses, in a module of its own so that
 * importing it loads none of the generated schemas.
 */

/** A JSON object as parsed: string keys, values unknown. */
export type JsonObject = Record<string, unknown>

/**
 * Whether `value` is a plain JSON object (not null, not an array): the guard to run before reading fields of
 * a parsed body.
 *
 * @example
 * isRecord({ a: 1 }) // true
 * isRecord([1]) // false
 * isRecord(null) // false
 */
export function isRecord(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

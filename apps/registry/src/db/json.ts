/** Reading the JSON-as-text and 0/1 columns back. */

/** Parses a JSON text column; `undefined` for NULL. */
export function parseJson<T>(value: string | null | undefined): T | undefined {
  if (value === null || value === undefined) return undefined
  return JSON.parse(value) as T
}

/** JSON text for a column; NULL for `undefined`. */
export function jsonText(value: unknown): string | null {
  return value === undefined ? null : JSON.stringify(value)
}

/** Copies an object without its `undefined`/`null` members (optional wire fields are omitted, not null). */
export function compact<T extends Record<string, unknown>>(value: T): T {
  return Object.fromEntries(
    Object.entries(value).filter(([, item]) => item !== undefined && item !== null),
  ) as T
}

/** SQL `LIKE` pattern for a substring search (escaping `%`, `_` and `\`), lowercased. */
export function containsPattern(text: string): string {
  return `%${text.toLowerCase().replace(/[\\%_]/g, (char) => `\\${char}`)}%`
}

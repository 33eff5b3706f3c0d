/** The storyboard path grammar: dotted keys with `[n]` indexes and `[*]` wildcards (`formats[0].format_id.id`). */

type Segment = { key: string } | { index: number } | { wildcard: true }

/** Splits a storyboard path into segments; the empty path is the whole value. Throws on a malformed path. */
export function parsePath(path: string): Segment[] {
  const segments: Segment[] = []
  if (path === '') return segments
  const pattern = /([^.[\]]+)|\[(\d+|\*)\]|(\.)/gy
  let expectKey = true
  let match: RegExpExecArray | null
  let consumed = 0
  while ((match = pattern.exec(path)) !== null) {
    consumed = pattern.lastIndex
    if (match[1] !== undefined) {
      if (!expectKey) throw new Error(`malformed path ${JSON.stringify(path)}`)
      segments.push({ key: match[1] })
      expectKey = false
    } else if (match[2] !== undefined) {
      segments.push(match[2] === '*' ? { wildcard: true } : { index: Number(match[2]) })
      expectKey = false
    } else {
      if (expectKey) throw new Error(`malformed path ${JSON.stringify(path)}`)
      expectKey = true
    }
  }
  if (consumed !== path.length || expectKey) throw new Error(`malformed path ${JSON.stringify(path)}`)
  return segments
}

/** Whether the path fans out over arrays (`[*]`). */
export const isWildcardPath = (path: string): boolean => parsePath(path).some((s) => 'wildcard' in s)

function step(value: unknown, segment: Segment): unknown[] {
  if ('key' in segment) {
    if (value === null || typeof value !== 'object' || Array.isArray(value)) return []
    const record = value as Record<string, unknown>
    return Object.prototype.hasOwnProperty.call(record, segment.key) ? [record[segment.key]] : []
  }
  if (!Array.isArray(value)) return []
  if ('index' in segment) return segment.index < value.length ? [value[segment.index]] : []
  return value
}

/**
 * Every value the path reaches (several with `[*]`, none when a segment is missing).
 * @example resolveAll({ a: [{ b: 1 }, { b: 2 }] }, 'a[*].b') // [1, 2]
 */
export function resolveAll(data: unknown, path: string): unknown[] {
  let values = [data]
  for (const segment of parsePath(path)) values = values.flatMap((value) => step(value, segment))
  return values
}

/**
 * The single value at a path without wildcards, or undefined when absent.
 * @example resolvePath({ context: { correlation_id: 'x' } }, 'context.correlation_id') // 'x'
 */
export function resolvePath(data: unknown, path: string): unknown {
  if (isWildcardPath(path)) throw new Error(`path ${path} has a wildcard; a single value was expected`)
  return resolveAll(data, path)[0]
}

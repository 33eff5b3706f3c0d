import type { HeaderInput } from './types.js'

/** One header's value, by case-insensitive name; repeated values are joined with ", " as HTTP does. */
export function readHeader(headers: HeaderInput, name: string): string | undefined {
  if (typeof (headers as Headers).get === 'function') return (headers as Headers).get(name) ?? undefined
  const wanted = name.toLowerCase()
  for (const [key, value] of Object.entries(
    headers as Record<string, string | readonly string[] | undefined>,
  )) {
    if (key.toLowerCase() !== wanted || value === undefined) continue
    return typeof value === 'string' ? value : value.join(', ')
  }
  return undefined
}

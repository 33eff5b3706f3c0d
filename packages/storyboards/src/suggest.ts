/** "Did you mean …": the storyboards an unknown reference most likely meant. */
import type { BundleEntry } from './bundle.js'

/** The last `/`-separated part of an id or key, without `.yaml`: `media_buy_seller/x` → `x`. */
const tail = (text: string): string =>
  text
    .replace(/\.yaml$/, '')
    .split('/')
    .pop() ?? text

/** Levenshtein distance between two short strings. */
function distance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, index) => index)
  for (let i = 1; i <= a.length; i += 1) {
    const current = [i]
    for (let j = 1; j <= b.length; j += 1) {
      current[j] = Math.min(
        previous[j]! + 1,
        current[j - 1]! + 1,
        previous[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1),
      )
    }
    previous = current
  }
  return previous[b.length]!
}

/**
 * The full ids an unknown storyboard reference most likely meant, best first (at most `limit`): ids whose last
 * part is the reference (`vendor_metric_accountability` → `media_buy_seller/vendor_metric_accountability`),
 * else ids or keys that contain it, else near misses (a typo of up to a third of its length). Copies under
 * `domains/` count once, as their `protocols/` original.
 *
 * @example
 * suggestStoryboards(bundle.entries, 'vendor_metric_accountability') // ['media_buy_seller/vendor_metric_accountability']
 */
export function suggestStoryboards(entries: readonly BundleEntry[], ref: string, limit = 3): string[] {
  const wanted = ref.replace(/\.yaml$/, '').toLowerCase()
  if (wanted === '') return []
  const ids = [...new Set(entries.filter((entry) => !entry.duplicateOf).map((entry) => entry.storyboard.id))]
  const keysById = new Map<string, string[]>()
  for (const entry of entries) {
    keysById.set(entry.storyboard.id, [...(keysById.get(entry.storyboard.id) ?? []), entry.key])
  }
  const texts = (id: string) => [id, ...(keysById.get(id) ?? [])].map((text) => text.toLowerCase())
  const wantedTail = tail(wanted)
  const ranked: Array<{ id: string; rank: number }> = []
  for (const id of ids) {
    const candidates = texts(id)
    if (candidates.some((text) => tail(text) === wantedTail)) ranked.push({ id, rank: 0 })
    else if (candidates.some((text) => text.includes(wanted))) ranked.push({ id, rank: 1 })
    else {
      const best = Math.min(...candidates.map((text) => distance(tail(text), wantedTail)))
      if (best <= Math.max(1, Math.floor(wantedTail.length / 3))) ranked.push({ id, rank: 2 + best })
    }
  }
  ranked.sort((a, b) => a.rank - b.rank || a.id.localeCompare(b.id))
  // An exact last part beats a containment, which beats a typo: only the best kind is suggested.
  const kind = (rank: number) => Math.min(rank, 2)
  const best = ranked[0] === undefined ? 0 : kind(ranked[0].rank)
  return ranked
    .filter((entry) => kind(entry.rank) === best)
    .slice(0, limit)
    .map((entry) => entry.id)
}

/**
 * What the status side knows about a storyboard id: its title, category and track, and which badge role it
 * counts towards. Read once from the official compliance bundle `@adwire/adcp-data` ships: a
 * storyboard under `protocols/<p>/` counts towards role `<p>`, one under `specialisms/<s>/` towards the
 * specialism's protocol (index.json), one under `universal/` towards none (every agent must pass it). An id
 * the bundle does not name (another version, a renamed storyboard) is shown by id, with no role.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { ADCP_VERSION, complianceDir } from '@adwire/adcp-data'
import { parse } from 'yaml'

/** The canonical badge roles of the document (`BadgeRole`). */
export const BADGE_ROLES = [
  'media-buy',
  'creative',
  'signals',
  'governance',
  'brand',
  'sponsored-intelligence',
] as const

export type BadgeRole = (typeof BADGE_ROLES)[number]

export const isBadgeRole = (value: string): value is BadgeRole =>
  (BADGE_ROLES as readonly string[]).includes(value)

/** The bundle version the catalog reads (the one the registry's runner executes). */
export const CATALOG_ADCP_VERSION = '3.1.19'

export interface StoryboardInfo {
  readonly id: string
  readonly title: string
  readonly category: string | null
  readonly track: string | null
  /** The badge role the storyboard counts towards (`undefined` for universal storyboards). */
  readonly role?: BadgeRole
  /** The specialism the storyboard proves (only under `specialisms/`). */
  readonly specialism?: string
  /** Whether that specialism is stable (preview specialisms are excluded from stable badges). */
  readonly stableSpecialism?: boolean
}

export interface StoryboardCatalog {
  info(storyboardId: string): StoryboardInfo
}

/** The bundle of `version` in `@adwire/adcp-data`; `undefined` for a version it does not carry. */
const bundleDir = (version: string): string | undefined =>
  version === ADCP_VERSION ? complianceDir : undefined

function yamlFiles(dir: string): string[] {
  if (!existsSync(dir)) return []
  const out: string[] = []
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const full = join(dir, entry.name)
    if (entry.isDirectory()) out.push(...yamlFiles(full))
    else if (entry.name.endsWith('.yaml')) out.push(full)
  }
  return out.sort()
}

interface IndexJson {
  specialisms?: Array<{ id: string; protocol?: string; status?: string }>
}

/** Reads the bundle's storyboards (their top-level `id`, `title`, `category`, `track`). */
export function loadCatalog(version = CATALOG_ADCP_VERSION): StoryboardCatalog {
  const known = new Map<string, StoryboardInfo>()
  const dir = bundleDir(version)
  if (dir) {
    const index = JSON.parse(readFileSync(join(dir, 'index.json'), 'utf8')) as IndexJson
    const specialisms = new Map((index.specialisms ?? []).map((entry) => [entry.id, entry]))
    const add = (file: string, extra: Partial<StoryboardInfo>) => {
      let document: unknown
      try {
        document = parse(readFileSync(file, 'utf8'))
      } catch {
        return
      }
      if (!document || typeof document !== 'object') return
      const { id, title, category, track } = document as Record<string, unknown>
      if (typeof id !== 'string' || known.has(id)) return
      known.set(id, {
        id,
        title: typeof title === 'string' ? title : id,
        category: typeof category === 'string' ? category : null,
        track: typeof track === 'string' ? track : null,
        ...extra,
      })
    }
    for (const file of yamlFiles(join(dir, 'universal'))) add(file, {})
    for (const protocol of existsSync(join(dir, 'protocols')) ? readdirSync(join(dir, 'protocols')) : []) {
      const role = isBadgeRole(protocol) ? protocol : undefined
      for (const file of yamlFiles(join(dir, 'protocols', protocol))) add(file, role ? { role } : {})
    }
    for (const specialism of existsSync(join(dir, 'specialisms'))
      ? readdirSync(join(dir, 'specialisms'))
      : []) {
      const entry = specialisms.get(specialism)
      const role = entry?.protocol && isBadgeRole(entry.protocol) ? entry.protocol : undefined
      for (const file of yamlFiles(join(dir, 'specialisms', specialism))) {
        add(file, {
          ...(role ? { role } : {}),
          specialism,
          stableSpecialism: (entry?.status ?? 'stable') === 'stable',
        })
      }
    }
  }
  return {
    info: (storyboardId) =>
      known.get(storyboardId) ?? { id: storyboardId, title: storyboardId, category: null, track: null },
  }
}

let shared: StoryboardCatalog | undefined

/** The catalog of the vendored bundle, read on first use. */
export function storyboardCatalog(): StoryboardCatalog {
  return (shared ??= loadCatalog())
}

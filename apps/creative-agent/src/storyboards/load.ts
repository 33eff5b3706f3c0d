/** Reads the vendored AdCP compliance storyboards (`conformance/compliance/<version>`) from the repository. */
import { readFileSync } from 'node:fs'
import { ADCP_STABLE_VERSION, conformancePath, listConformanceFiles } from '@adwire/conformance'
import { parse } from 'yaml'
import type { Storyboard } from './types.js'

/** The compliance bundle folder, relative to `conformance/`. */
export const COMPLIANCE_FOLDER = `compliance/${ADCP_STABLE_VERSION}`

/**
 * Every storyboard YAML file below the given bundle folders, as bundle-relative paths (sorted).
 * @example listStoryboardFiles(['universal', 'protocols/creative']) // ['protocols/creative/index.yaml', …]
 */
export function listStoryboardFiles(folders: readonly string[]): string[] {
  return folders
    .flatMap((folder) =>
      listConformanceFiles(`${COMPLIANCE_FOLDER}/${folder}`, (file) => file.endsWith('.yaml')).map(
        (file) => `${folder}/${file}`,
      ),
    )
    .sort()
}

/**
 * Parses one storyboard file of the bundle and checks the structure the runner relies on.
 * @example loadStoryboard('universal/capability-discovery.yaml').phases[0].steps[0].task // 'get_adcp_capabilities'
 */
export function loadStoryboard(file: string): Storyboard {
  const text = readFileSync(conformancePath(COMPLIANCE_FOLDER, file), 'utf8')
  const doc = parse(text) as Partial<Storyboard> | null
  if (!doc || typeof doc.id !== 'string' || !Array.isArray(doc.phases)) {
    throw new Error(`${file}: not a storyboard (needs id and phases)`)
  }
  for (const phase of doc.phases) {
    if (typeof phase.id !== 'string' || !Array.isArray(phase.steps)) {
      throw new Error(`${file}: phase without id or steps`)
    }
    for (const step of phase.steps) {
      if (typeof step.id !== 'string' || typeof step.task !== 'string') {
        throw new Error(`${file}: phase ${phase.id} has a step without id or task`)
      }
    }
  }
  if (doc.requires !== undefined && (!Array.isArray(doc.requires) || doc.requires.length === 0)) {
    throw new Error(`${file}: requires must be a non-empty list`)
  }
  return doc as Storyboard
}

/**
 * Where the vendored AdCP data the service reads at run time lives: the registry OpenAPI document and the
 * 3.1.19 JSON Schemas. The build copies them to `dist/conformance/`; from the sources they are found in the
 * repository's `conformance/` folder. `REGISTRY_CONFORMANCE_DIR` overrides both.
 */
import { existsSync } from 'node:fs'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'

let found: string | undefined

/**
 * The folder holding `openapi/registry.yaml` and `schemas/3.1.19/`.
 *
 * @example
 * join(conformanceDir(), 'openapi', 'registry.yaml')
 */
export function conformanceDir(): string {
  if (found) return found
  const override = process.env.REGISTRY_CONFORMANCE_DIR
  if (override) return (found = resolve(override))
  let folder = dirname(fileURLToPath(import.meta.url))
  for (;;) {
    const candidate = join(folder, 'conformance')
    if (existsSync(join(candidate, 'openapi', 'registry.yaml'))) return (found = candidate)
    const parent = dirname(folder)
    if (parent === folder) break
    folder = parent
  }
  throw new Error('cannot find conformance/openapi/registry.yaml; set REGISTRY_CONFORMANCE_DIR')
}

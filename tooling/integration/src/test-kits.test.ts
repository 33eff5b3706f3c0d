/**
 * Test kits stay test kits: in each published package they live in one place, `src/testing/`, and no library
 * file (an entry or anything it reaches) imports them or vitest, so nothing of them is bundled into `dist/`.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { join, relative } from 'node:path'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'

const root = fileURLToPath(new URL('../../../', import.meta.url))
const packagesDir = join(root, 'packages')
const packages = readdirSync(packagesDir).filter((name) =>
  existsSync(join(packagesDir, name, 'package.json')),
)

/** Kits not yet moved, each with its reason (none today; the set stays so that an exception carries one). */
const NOT_YET_MOVED = new Set<string>()

function files(folder: string): string[] {
  if (!existsSync(folder)) return []
  return readdirSync(folder, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory()
      ? entry.name === 'generated'
        ? []
        : files(join(folder, entry.name))
      : /\.(ts|js)$/.test(entry.name)
        ? [join(folder, entry.name)]
        : [],
  )
}

const isTest = (file: string) => /\.test\.ts$|\.bench\.ts$/.test(file)
const inTesting = (file: string) => file.includes(`${join('src', 'testing')}/`)
const KIT_NAME = /(^|\/)(test-support|test-helpers|test-server|support|[a-z-]+-fixture)\.ts$/
const IMPORTS = /(?:from|import)\s*\(?\s*['"]([^'"]+)['"]/g

describe('test kits', () => {
  it('found the packages', () => {
    expect(packages).toEqual(expect.arrayContaining(['http-signatures', 'webhooks', 'store-postgres']))
  })

  it.each(packages)('%s: library files import neither vitest nor a test kit', (name) => {
    const offenders: string[] = []
    for (const file of files(join(packagesDir, name, 'src'))) {
      if (isTest(file) || inTesting(file)) continue
      const where = relative(root, file)
      if (NOT_YET_MOVED.has(where)) continue
      const text = readFileSync(file, 'utf8')
      for (const [, specifier] of text.matchAll(IMPORTS)) {
        if (
          specifier === 'vitest' ||
          /(^|\/)testing\/|test-support|test-helpers|test-server/.test(specifier!)
        )
          offenders.push(`${where} imports ${specifier}`)
      }
    }
    expect(offenders).toEqual([])
  })

  it.each(packages)('%s: kits live in src/testing/ only', (name) => {
    const misplaced = [...files(join(packagesDir, name, 'src')), ...files(join(packagesDir, name, 'test'))]
      .filter((file) => !isTest(file) && !inTesting(file) && KIT_NAME.test(file))
      .map((file) => relative(root, file))
      .filter((file) => !NOT_YET_MOVED.has(file))
    expect(misplaced).toEqual([])
  })

  it.each(packages)('%s: the built entries hold no test code', (name) => {
    const dist = join(packagesDir, name, 'dist')
    const built = files(dist).filter((file) => file.endsWith('.js'))
    // Before a build there is nothing to check; `pnpm test` runs after `pnpm build`.
    for (const file of built) {
      const text = readFileSync(file, 'utf8')
      expect(text, relative(root, file)).not.toMatch(/from ['"]vitest['"]|src\/testing\//)
    }
  })
})

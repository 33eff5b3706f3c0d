import { mkdirSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

/**
 * Vitest global setup: every temporary file or folder the tests make (`os.tmpdir()`, `mkdtemp`, the SQLite files
 * and data folders of the services they start, child processes included) goes under one folder of this run,
 * removed when the run ends, so a test run leaves nothing behind in the system's temporary folder.
 * `ADWIRE_KEEP_TEST_TMP=1` keeps it (its path is printed) for a look after a failure.
 */
export default function setup() {
  const parent = tmpdir()
  mkdirSync(parent, { recursive: true })
  const root = mkdtempSync(join(parent, 'adwire-test-'))
  const previous = process.env.TMPDIR
  process.env.TMPDIR = root
  return () => {
    if (previous === undefined) delete process.env.TMPDIR
    else process.env.TMPDIR = previous
    if (process.env.ADWIRE_KEEP_TEST_TMP === '1') {
      console.log(`test temporary files kept in ${root}`)
      return
    }
    rmSync(root, { recursive: true, force: true, maxRetries: 3 })
  }
}

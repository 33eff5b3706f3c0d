import { fileURLToPath } from 'node:url'
import { defineConfig } from 'vitest/config'
import { ProgressReporter } from '@adwire/vitest-config/progress-reporter'
import { SummaryLineReporter } from '@adwire/vitest-config/summary-reporter'

// Packages that promise to run on any web-standard runtime: their whole suite (vectors included) runs a second
// time in the edge-runtime VM (vitest `environment: 'edge-runtime'`, @edge-runtime/vm), with the node:crypto
// fast path, Buffer and require taken away (tooling/vitest-config/src/edge-setup.js).
const edgePackages = ['http-signatures', 'webhooks']
const edgeSetup = fileURLToPath(new URL('./tooling/vitest-config/src/edge-setup.js', import.meta.url))
// Every temporary file of a run goes under one folder, removed at the end (tooling/vitest-config/src/temp-root.js).
const tempRoot = fileURLToPath(new URL('./tooling/vitest-config/src/temp-root.js', import.meta.url))

// One run over every workspace project, so that the suite ends with one summary.
export default defineConfig({
  test: {
    projects: [
      'packages/*',
      'apps/*',
      'tooling/*',
      'examples/*',
      ...edgePackages.map((name) => ({
        extends: `./packages/${name}/vitest.config.ts`,
        test: {
          name: `${name}-edge`,
          root: `./packages/${name}`,
          environment: 'edge-runtime',
          setupFiles: [edgeSetup],
        },
      })),
    ],
    globalSetup: [tempRoot],
    // A running count of files and tests every 10 files or 15 s, vitest's own lines, then one closing line.
    reporters: [new ProgressReporter(), 'default', new SummaryLineReporter()],
  },
})

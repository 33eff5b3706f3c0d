import { defineConfig } from 'vitest/config'
import { SummaryLineReporter } from '@adwire/vitest-config/summary-reporter'

// One run over every workspace project, so that the suite ends with one summary.
export default defineConfig({
  test: {
    projects: ['packages/*', 'apps/*', 'tooling/*'],
    reporters: ['default', new SummaryLineReporter()],
  },
})

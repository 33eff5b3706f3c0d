import { defineProject } from 'vitest/config'
import { sharedTestOptions } from './src/index.js'

// The root config sets the temporary-folder global setup for a whole run; run alone, this project sets it itself.
export default defineProject({
  test: { ...sharedTestOptions, name: 'vitest-config', globalSetup: ['./src/temp-root.js'] },
})

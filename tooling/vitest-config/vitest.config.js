import { defineProject } from 'vitest/config'
import { sharedTestOptions } from './src/index.js'

export default defineProject({ test: { ...sharedTestOptions, name: 'vitest-config' } })

import { defineProject } from 'vitest/config'
import { sharedTestOptions } from '@adwire/vitest-config'

export default defineProject({ test: { ...sharedTestOptions, name: 'sink-rabbitmq' } })

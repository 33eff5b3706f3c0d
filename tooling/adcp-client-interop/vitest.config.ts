import { defineProject } from 'vitest/config'
import { sharedTestOptions } from '@adwire/vitest-config'

export default defineProject({
  test: {
    ...sharedTestOptions,
    name: 'adcp-client-interop',
    testTimeout: 60_000,
    // After every other project, one file at a time. When the SDK's first get_adcp_capabilities call fails
    // (seen with a second worker busy beside it), the SDK takes the agent for AdCP v2 for good and strips the
    // 3.x fields (buying_mode, account) from every later request, and the seller refuses them.
    sequence: { groupOrder: 1 },
    maxWorkers: 1,
  },
})

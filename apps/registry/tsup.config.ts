import { defineConfig } from 'tsup'

export default defineConfig({
  entry: {
    server: 'src/server.ts',
    index: 'src/index.ts',
    'auth/admin-cli': 'src/auth/admin-cli.ts',
    // The compliance worker thread (compliance/run-executor.ts starts it from beside the bundle).
    'compliance-worker': 'src/compliance/run-worker.ts',
  },
  format: ['esm'],
  dts: { entry: 'src/index.ts' },
  clean: true,
  sourcemap: true,
  target: 'es2022',
  platform: 'node',
  // The OpenAPI document, the JSON Schemas and the compliance bundle it reads at run time come from @adwire/adcp-data.
})

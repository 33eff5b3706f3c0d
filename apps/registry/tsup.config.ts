import { cpSync } from 'node:fs'
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
  // The service reads the registry OpenAPI document, the AdCP JSON Schemas and the compliance bundle at run time (spec/locate.ts):
  // ship the vendored copies beside the bundle.
  async onSuccess() {
    cpSync('../../conformance/openapi', 'dist/conformance/openapi', { recursive: true })
    cpSync('../../conformance/schemas/3.1.19', 'dist/conformance/schemas/3.1.19', { recursive: true })
    // The compliance bundle the storyboard catalog and the runs read (its schemas are the ones above).
    cpSync('../../conformance/compliance/3.1.19', 'dist/conformance/compliance/3.1.19', { recursive: true })
  },
})

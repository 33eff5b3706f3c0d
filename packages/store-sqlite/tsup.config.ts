import { defineConfig } from 'tsup'

export default defineConfig({
  entry: ['src/index.ts', 'src/inbox-worker-thread.ts'],
  format: ['esm'],
  dts: { entry: 'src/index.ts' },
  clean: true,
  sourcemap: true,
  target: 'es2022',
  // A native addon: never bundled (tsup leaves dependencies external anyway; this says so).
  external: ['better-sqlite3'],
})

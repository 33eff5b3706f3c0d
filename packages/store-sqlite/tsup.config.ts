import { defineConfig } from 'tsup'

export default defineConfig({
  entry: ['src/index.ts'],
  format: ['esm'],
  dts: true,
  clean: true,
  sourcemap: true,
  target: 'es2022',
  // A native addon: never bundled (tsup leaves dependencies external anyway; this says so).
  external: ['better-sqlite3'],
})

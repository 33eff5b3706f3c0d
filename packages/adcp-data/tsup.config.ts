import { defineConfig } from 'tsup'
import { copyData } from './scripts/copy-data.js'

export default defineConfig({
  entry: ['src/index.ts'],
  format: ['esm'],
  dts: true,
  clean: true,
  sourcemap: true,
  target: 'es2022',
  platform: 'node',
  // The data: the manifest-checked files of the repository's conformance/ folder, copied into dist/adcp/.
  onSuccess: async () => void copyData(),
})

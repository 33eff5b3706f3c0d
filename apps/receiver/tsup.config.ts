import { defineConfig } from 'tsup'

export default defineConfig({
  // The inbox worker imports the writer by its own file (see db/open.ts).
  entry: { server: 'src/server.ts', index: 'src/index.ts', 'inbox-writer': 'src/db/inbox-writer.ts' },
  format: ['esm'],
  dts: { entry: 'src/index.ts' },
  clean: true,
  sourcemap: true,
  target: 'es2022',
  platform: 'node',
})

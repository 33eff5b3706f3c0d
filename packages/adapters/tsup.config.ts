import { defineConfig } from 'tsup'

export default defineConfig({
  entry: ['src/node.ts', 'src/express.ts', 'src/fastify.ts'],
  format: ['esm'],
  dts: true,
  clean: true,
  sourcemap: true,
  target: 'es2022',
})

// Builds the worker (esbuild), writes a workerd config for it under DATA_DIR, runs workerd on 127.0.0.1:PORT,
// and prints `listening on …` once the socket accepts connections. PORT=0 picks a free port.
import { spawn } from 'node:child_process'
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { connect, createServer } from 'node:net'
import path from 'node:path'
import { build } from 'esbuild'

const dataDir = path.resolve(process.env.DATA_DIR ?? 'data')
const jwks = readFileSync(process.env.JWKS_FILE ?? 'seller-jwks.json', 'utf8')
let port = Number(process.env.PORT ?? 3000)
if (port === 0) {
  port = await new Promise((resolve) => {
    const probe = createServer().listen(0, '127.0.0.1', () => {
      const { port: free } = probe.address()
      probe.close(() => resolve(free))
    })
  })
}

mkdirSync(path.join(dataDir, 'durable-objects'), { recursive: true })
await build({
  entryPoints: ['src/worker.ts'],
  bundle: true,
  format: 'esm',
  platform: 'browser',
  conditions: ['workerd', 'worker', 'browser'],
  // Only key fetching over the network (a lazily loaded module of @adwire/http-signatures) imports node:*;
  // workerd provides those modules (nodejs_compat is the default from 2026-08-04).
  external: ['node:*'],
  outfile: path.join(dataDir, 'worker.js'),
  logLevel: 'error',
})
writeFileSync(
  path.join(dataDir, 'config.capnp'),
  `using Workerd = import "/workerd/workerd.capnp";
const config :Workerd.Config = (
  services = [
    (name = "main", worker = .receiver),
    (name = "storage", disk = (path = ${JSON.stringify(path.join(dataDir, 'durable-objects'))}, writable = true)),
  ],
  sockets = [(name = "http", address = "127.0.0.1:${port}", http = (), service = "main")],
);
const receiver :Workerd.Worker = (
  modules = [(name = "worker.js", esModule = embed "worker.js")],
  compatibilityDate = "2026-11-01",
  bindings = [
    (name = "SELLER_JWKS", text = ${JSON.stringify(jwks.trim())}),
    (name = "RECEIVER", durableObjectNamespace = "Receiver"),
  ],
  durableObjectNamespaces = [(className = "Receiver", uniqueKey = "adwire-example-receiver")],
  durableObjectStorage = (localDisk = "storage"),
);
`,
)

const workerd = spawn('workerd', ['serve', path.join(dataDir, 'config.capnp'), '--experimental'], {
  stdio: ['ignore', 'inherit', 'inherit'],
})
workerd.on('exit', (code) => process.exit(code ?? 1))
for (const signal of ['SIGTERM', 'SIGINT']) process.on(signal, () => workerd.kill(signal))

for (let attempt = 0; ; attempt += 1) {
  const open = await new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1', () => resolve(socket.end() && true))
    socket.on('error', () => resolve(false))
  })
  if (open) break
  if (attempt > 200) throw new Error('workerd did not open its socket')
  await new Promise((resolve) => setTimeout(resolve, 100))
}
console.log(`listening on http://127.0.0.1:${port}`)

// Setup of the web-standard ("edge") test projects: the edge-runtime VM's globals (fetch, Request, Response,
// Headers, crypto, TextEncoder…) stand in for Node's (vitest `environment: 'edge-runtime'`), and
// `process.getBuiltinModule` is taken away before any module under test loads, so @adwire/http-signatures finds
// no node:crypto fast path and runs on WebCrypto. Node's own globals (Buffer, setImmediate) stay: the test
// servers on 127.0.0.1 run in the same process and need them; the lint rule `adwire/edge-core` keeps them out of
// the packages' core.
const runtime = /** @type {{ getBuiltinModule?: unknown } | undefined} */ (globalThis.process)
if (runtime !== undefined) {
  Object.defineProperty(runtime, 'getBuiltinModule', { value: undefined, configurable: true, writable: true })
}
if (typeof (/** @type {{ EdgeRuntime?: unknown }} */ (globalThis).EdgeRuntime) !== 'string') {
  throw new Error('edge-setup.js runs only in vitest environment "edge-runtime"')
}

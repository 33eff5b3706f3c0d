// @ts-check
// One flat config for the whole workspace. ESLint 10 looks it up from each linted file, so the packages'
// `eslint src ...` scripts use it too. Only syntax-level rules: no type information, so linting stays fast.
import js from '@eslint/js'
import { defineConfig, globalIgnores } from 'eslint/config'
import tseslint from 'typescript-eslint'

/**
 * The globals Node adds beside the ECMAScript built-ins (which `ecmaVersion` provides), for the plain
 * JavaScript files. Written out here rather than taken from the `globals` package to keep dependencies down.
 * @type {Record<string, 'readonly' | 'writable'>}
 */
const nodeGlobals = Object.fromEntries(
  [
    'AbortController',
    'AbortSignal',
    'Blob',
    'Buffer',
    'BroadcastChannel',
    'CompressionStream',
    'CustomEvent',
    'DecompressionStream',
    'DOMException',
    'Event',
    'EventTarget',
    'File',
    'FormData',
    'Headers',
    'MessageChannel',
    'MessageEvent',
    'MessagePort',
    'Performance',
    'ReadableStream',
    'Request',
    'Response',
    'TextDecoder',
    'TextDecoderStream',
    'TextEncoder',
    'TextEncoderStream',
    'TransformStream',
    'URL',
    'URLSearchParams',
    'WebAssembly',
    'WritableStream',
    'atob',
    'btoa',
    'clearImmediate',
    'clearInterval',
    'clearTimeout',
    'console',
    'crypto',
    'fetch',
    'global',
    'performance',
    'process',
    'queueMicrotask',
    'setImmediate',
    'setInterval',
    'setTimeout',
    'structuredClone',
  ].map((name) => [name, /** @type {const} */ ('readonly')]),
)

export default defineConfig([
  globalIgnores([
    '**/dist/',
    '**/node_modules/',
    '**/.turbo/',
    '**/.next/',
    '**/next-env.d.ts',
    '**/coverage/',
    'conformance/',
    'packages/schemas/src/generated/**',
  ]),
  {
    name: 'adwire/javascript',
    files: ['**/*.{js,mjs,cjs,ts,mts,cts}'],
    extends: [js.configs.recommended],
  },
  {
    name: 'adwire/typescript',
    files: ['**/*.{ts,mts,cts}'],
    extends: [tseslint.configs.recommended],
    rules: {
      // `_`-prefixed names mark deliberately unused parameters and destructured leftovers.
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrorsIgnorePattern: '^_' },
      ],
    },
  },
  {
    // http-signatures and webhooks promise to run on any web-standard runtime (edge workers, Deno, Bun): their
    // core takes nothing from Node. Type-only imports are erased; node:crypto is reached at run time only
    // through `process.getBuiltinModule` (crypto-backend.ts), and the Node-only parts live in explicit files.
    name: 'adwire/edge-core',
    files: ['packages/http-signatures/src/**/*.ts', 'packages/webhooks/src/**/*.ts'],
    ignores: [
      '**/*.test.ts',
      'packages/http-signatures/src/node.ts',
      'packages/webhooks/src/node.ts',
      'packages/http-signatures/src/keys/safe-fetch.ts',
      'packages/http-signatures/src/keys/pinned-fetch.ts',
      'packages/http-signatures/src/keys/pinned-target.ts',
      // Test kits (servers, fixtures) run on Node, beside the tests; never imported by the core.
      'packages/http-signatures/src/testing/**',
      'packages/webhooks/src/testing/**',
    ],
    rules: {
      '@typescript-eslint/no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              regex: '^node:',
              allowTypeImports: true,
              message:
                'the core is web-standard: Node-only code goes in the ./node entry (src/node.ts) or a Node-only file',
            },
          ],
          paths: [
            'buffer',
            'crypto',
            'fs',
            'http',
            'https',
            'net',
            'dns',
            'os',
            'path',
            'url',
            'util',
            'stream',
          ].map((name) => ({
            name,
            allowTypeImports: true,
            message: 'the core is web-standard: no Node built-ins',
          })),
        },
      ],
      'no-restricted-globals': [
        'error',
        {
          name: 'Buffer',
          message: 'the core is web-standard: use Uint8Array, TextEncoder and the base64 helpers',
        },
        { name: 'require', message: 'the core is ESM and web-standard' },
        { name: '__dirname', message: 'the core is web-standard' },
      ],
      'no-restricted-syntax': [
        'error',
        {
          selector: 'ImportExpression[source.value=/^node:/]',
          message:
            'the core is web-standard: no dynamic import of Node built-ins (use process.getBuiltinModule behind a check)',
        },
      ],
    },
  },
  {
    // One log format per app: every line a service writes goes through service-kit's `print` and `log` (each
    // prefixed with the service's name), never a bare `process.stdout.write` or `console.*` line among them.
    name: 'adwire/app-output',
    files: ['apps/*/src/**/*.ts'],
    ignores: [
      '**/*.test.ts',
      'apps/*/src/testing/**',
      'apps/*/src/**/*-testing.ts',
      'apps/*/src/test-support.ts',
      // A command of its own (`node dist/auth/admin-cli.js create-org …`), not the service's output.
      'apps/registry/src/auth/admin-cli.ts',
    ],
    rules: {
      'no-console': 'error',
      'no-restricted-properties': [
        'error',
        { object: 'process', property: 'stdout', message: "Write through service-kit's print or log." },
        { object: 'process', property: 'stderr', message: "Write through service-kit's print or log." },
      ],
    },
  },
  {
    name: 'adwire/node-esm',
    files: ['**/*.{js,mjs}'],
    languageOptions: {
      ecmaVersion: 'latest',
      sourceType: 'module',
      globals: nodeGlobals,
    },
    rules: {
      'no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrorsIgnorePattern: '^_' },
      ],
    },
  },
  {
    name: 'adwire/node-cjs',
    files: ['**/*.cjs'],
    languageOptions: {
      ecmaVersion: 'latest',
      sourceType: 'commonjs',
      globals: {
        ...nodeGlobals,
        require: 'readonly',
        module: 'writable',
        exports: 'writable',
        __dirname: 'readonly',
        __filename: 'readonly',
      },
    },
  },
])

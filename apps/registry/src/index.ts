/** What other workspace code (tests of the registry client, the CLI) may use of the registry service. */
export { startRegistry, type RunningRegistry, type StartOverrides } from './service.js'
export { parseEnv, EnvError, type RegistryEnv, type DatabaseConfig, type CrawlConfig } from './env.js'
export { createApp, IMPLEMENTED_OPERATIONS } from './app.js'
export { seedDemoWorld, DEMO_AGENTS } from './seed.js'

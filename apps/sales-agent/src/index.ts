export { startSalesAgent, type RunningSalesAgent, type StartOptions } from './service.js'
export { parseEnv, EnvError, type SalesAgentEnv, type DatabaseConfig, type TokenGrant } from './env.js'
export type { SellerEvents, BuyStatusChange, ImpairmentChange } from '@adwire/seller'

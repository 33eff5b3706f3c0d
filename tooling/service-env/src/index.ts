export { flag, httpUrl, intIn, optionalHttpUrl, optionalText, serviceFields } from './fields.js'
export { EnvError, readEnv, serviceSettings, type DatabaseConfig, type ServiceSettings } from './read-env.js'

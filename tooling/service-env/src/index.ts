export {
  flag,
  httpFields,
  httpLimits,
  httpUrl,
  intIn,
  optionalHttpUrl,
  optionalText,
  serviceFields,
  type HttpLimitSettings,
} from './fields.js'
export { EnvError, readEnv, serviceSettings, type DatabaseConfig, type ServiceSettings } from './read-env.js'

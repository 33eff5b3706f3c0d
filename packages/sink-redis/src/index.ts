export { createRedisSink, redisSinkFromUrl } from './redis-sink.js'
export { redisSinkOptionsFromUrl, DEFAULT_DEDUPE_SECONDS, type RedisSinkOptions } from './options.js'
export { RedisSinkError, type RedisSinkErrorCode } from './errors.js'

export { createNatsSink, natsSinkFromUrl } from './nats-sink.js'
export { natsSinkOptionsFromUrl, type NatsSinkOptions } from './options.js'
export { NatsSinkError, type NatsSinkErrorCode } from './errors.js'

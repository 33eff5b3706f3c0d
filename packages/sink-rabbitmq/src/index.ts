export { createRabbitSink, rabbitSinkFromUrl } from './rabbit-sink.js'
export { rabbitSinkOptionsFromUrl, type RabbitSinkOptions } from './options.js'
export { RabbitSinkError, type RabbitSinkErrorCode } from './errors.js'

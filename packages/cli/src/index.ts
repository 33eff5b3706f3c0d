export { mainHelp, run } from './cli.js'
export { processIo, type Io } from './io.js'
export { version } from './version.js'

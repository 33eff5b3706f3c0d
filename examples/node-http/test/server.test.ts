import { fileURLToPath } from 'node:url'
import { describeReceivingExample } from '@adwire/example-kit'

describeReceivingExample('node-http', fileURLToPath(new URL('..', import.meta.url)))

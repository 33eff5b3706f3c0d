import { fileURLToPath } from 'node:url'
import { describeReceivingExample } from '@adwire/example-kit'

describeReceivingExample('hono', fileURLToPath(new URL('..', import.meta.url)))

import { fileURLToPath } from 'node:url'
import { describeReceivingExample } from '@adwire/example-kit'

describeReceivingExample('workerd', fileURLToPath(new URL('..', import.meta.url)))

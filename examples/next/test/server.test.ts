import { fileURLToPath } from 'node:url'
import { describeReceivingExample } from '@adwire/example-kit'

describeReceivingExample('next', fileURLToPath(new URL('..', import.meta.url)))

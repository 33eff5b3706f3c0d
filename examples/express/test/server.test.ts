import { fileURLToPath } from 'node:url'
import { describeReceivingExample } from '@adwire/example-kit'

describeReceivingExample('express', fileURLToPath(new URL('..', import.meta.url)))

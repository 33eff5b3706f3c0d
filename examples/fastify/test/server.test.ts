import { fileURLToPath } from 'node:url'
import { describeReceivingExample } from '@adwire/example-kit'

describeReceivingExample('fastify', fileURLToPath(new URL('..', import.meta.url)))

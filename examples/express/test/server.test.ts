import { fileURLToPath } from 'node:url'
import { describeReceivingExample, describeSignedRequests } from '@adwire/example-kit'

const dir = fileURLToPath(new URL('..', import.meta.url))
describeReceivingExample('express', dir)
describeSignedRequests('express', dir)

export {
  describeReceivingExample,
  describeSignedRequests,
  envelope,
  WEBHOOK_PATH,
} from './receiving-suite.js'
export { independentKey, independentlySigned, type IndependentKey } from './independent-signer.js'
export { signed } from './sign.js'
export { runExample, startExample, type RunningExample } from './start.js'

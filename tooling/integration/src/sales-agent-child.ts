/**
 * The sales agent as its own process for the end-to-end tests, with the test cadences the environment does
 * not carry: REPORT_PERIOD_SECONDS (every buy's delivery-report cadence), REPORT_TICK_MS (the report
 * scheduler), SENDER_LEASE_SECONDS and SENDER_TIMEOUT_MS (how soon a restarted sender takes over an attempt a
 * killed one left), DUE_TICK_MS (how often due reviews are looked for) and CLOCK_OFFSET_SECONDS (the agent's clock
 * runs this far ahead of the machine's: a restart after a crash can stand for one long enough for the dead
 * process's leases to have expired). Everything else is the agent's own environment.
 * Usage: node --import tsx sales-agent-child.ts
 */
import { parseEnv, startSalesAgent } from '@adwire/app-sales-agent'

const number = (name: string) => (process.env[name] ? Number(process.env[name]) : undefined)
const period = number('REPORT_PERIOD_SECONDS')
const tick = number('REPORT_TICK_MS')
const lease = number('SENDER_LEASE_SECONDS')
const timeout = number('SENDER_TIMEOUT_MS')
const dueTick = number('DUE_TICK_MS')
const offset = number('CLOCK_OFFSET_SECONDS')
const agent = await startSalesAgent(parseEnv(process.env), {
  senderPollMs: 50,
  ...(period ? { reportPeriodSeconds: period } : {}),
  ...(tick ? { reportTickMs: tick } : {}),
  ...(lease ? { senderLeaseSeconds: lease } : {}),
  ...(timeout ? { senderTimeoutMs: timeout } : {}),
  ...(dueTick ? { dueTickMs: dueTick } : {}),
  ...(offset ? { now: () => Date.now() / 1000 + offset } : {}),
  log: (entry) => process.stdout.write(`${JSON.stringify(entry)}\n`),
})
process.stdout.write(`sales-agent: listening on ${agent.url}\n`)
process.once('SIGTERM', () => void agent.close(2000).then(() => process.exit(0)))

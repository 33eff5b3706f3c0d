/**
 * The page in a real browser: Debian's chromium driven by playwright-core (no browser download). Skipped,
 * saying so, where /usr/bin/chromium is not installed (.ci/run installs it).
 */
import { existsSync } from 'node:fs'
import { join } from 'node:path'
import { generateSigningKey, type AdcpJwk, type Jwks } from '@adwire/http-signatures'
import type { Sink } from '@adwire/webhooks'
import { chromium, type Browser } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { RunningReceiver } from './service.js'
import { ADMIN_TOKEN, api, envelope, sendSigned, startTestReceiver, tempDir } from './testing/receiver.js'

const CHROMIUM = '/usr/bin/chromium'
const available = existsSync(CHROMIUM)
if (!available) {
  console.warn(`page tests skipped: ${CHROMIUM} is missing (apt-get install -y chromium)`)
}

let receiver: RunningReceiver
let browser: Browser
let privateJwk: AdcpJwk
let jwks: Jwks

describe.skipIf(!available)('the page in chromium', () => {
  beforeAll(async () => {
    const key = await generateSigningKey({ alg: 'ed25519', kid: 'page-key' })
    privateJwk = key.privateJwk
    jwks = key.jwks
    receiver = await startTestReceiver()
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: [
        '--headless',
        '--no-sandbox',
        '--disable-gpu',
        '--disable-background-networking',
        '--disable-component-update',
        '--no-first-run',
      ],
    })
  }, 60_000)

  afterAll(async () => {
    await browser?.close()
    await receiver?.close()
  })

  it('refuses a wrong token, saying so', async () => {
    const page = await browser.newPage()
    await page.goto(`${receiver.url}/`)
    await page.fill('#token', 'not-the-admin-token')
    await page.click('button[type=submit]')
    await expect.poll(() => page.textContent('#auth-error')).toMatch(/refused.*forbidden/)
    expect(await page.isHidden('#content')).toBe(true)
    await page.close()
  })

  it('shows deliveries live on their operation timeline and forged ones with their code', async () => {
    const { id, url } = (
      await api(receiver, '/api/registrations', {
        body: { auth: 'rfc9421', jwks, label: 'Seller X (RFC 9421)' },
      })
    ).body
    const history = envelope({ operation_id: 'op_campaign_q3', status: 'submitted', task_id: 'task_q3' })
    expect((await sendSigned(url, history, privateJwk)).status).toBe(200)

    const page = await browser.newPage({ viewport: { width: 1200, height: 900 } })
    const errors: string[] = []
    page.on('pageerror', (error) => errors.push(error.message))
    page.on('console', (message) => {
      if (message.type() === 'error') errors.push(message.text())
    })
    await page.goto(`${receiver.url}/`)
    await page.fill('#token', ADMIN_TOKEN)
    await page.click('button[type=submit]')
    await page.waitForSelector('#status.live')
    const card = `[data-registration="${id}"]`
    await page.waitForSelector(`${card} li[data-key="${history.idempotency_key}"]`)
    expect(await page.textContent('#registration-rows')).toContain(id)

    // Live: sent after the page connected, shown without a reload.
    const working = envelope({ operation_id: 'op_campaign_q3', status: 'working', task_id: 'task_q3' })
    const completed = envelope({
      operation_id: 'op_campaign_q3',
      status: 'completed',
      task_id: 'task_q3',
      result: {},
    })
    const other = envelope({ operation_id: 'op_creative_7', status: 'input-required', task_id: 'task_c7' })
    for (const payload of [working, completed, other]) {
      expect((await sendSigned(url, payload, privateJwk)).status).toBe(200)
    }
    const forger = await generateSigningKey({ alg: 'ed25519', kid: 'page-key' })
    expect((await sendSigned(url, envelope(), forger.privateJwk)).status).toBe(401)

    const timeline = `${card} [data-operation="op_campaign_q3"] ol.timeline li`
    await page.waitForSelector(
      `${card} [data-operation="op_campaign_q3"] li[data-key="${completed.idempotency_key}"]`,
    )
    await page.waitForSelector(
      `${card} [data-operation="op_creative_7"] li[data-key="${other.idempotency_key}"]`,
    )
    expect(
      await page.$$eval(timeline, (items) => items.map((item) => item.getAttribute('data-status'))),
    ).toEqual(['submitted', 'working', 'completed'])
    const failure = await page.waitForSelector(
      `${card} ol.failures li[data-code="webhook_signature_invalid"]`,
    )
    expect(await failure.textContent()).toContain('HTTP 401')
    expect(await page.textContent(`${card} li[data-key="${completed.idempotency_key}"] .publications`)).toBe(
      'published 1×',
    )

    const screenshot = join(tempDir('adwire-receiver-page-'), 'receiver-page.png')
    await page.screenshot({ path: screenshot, fullPage: true })
    console.log(`receiver page screenshot: ${screenshot}`)
    expect(errors).toEqual([])
    await page.close()
  })

  it("shows the relay's lag and last error", async () => {
    const down: Sink = {
      kind: 'rabbitmq',
      target: 'amqp://127.0.0.1:5672/',
      publish: () => Promise.reject(new Error('connect ECONNREFUSED 127.0.0.1:5672')),
      close: () => Promise.resolve(),
    }
    const relaying = await startTestReceiver(
      {},
      { sink: down, forwarder: { intervalMs: 50, baseDelaySeconds: 60 } },
    )
    try {
      const { url } = (await api(relaying, '/api/registrations', { body: { auth: 'rfc9421', jwks } })).body
      expect((await sendSigned(url, envelope(), privateJwk)).status).toBe(200)
      await relaying.runtime.forwarder!.drain()
      const page = await browser.newPage()
      await page.goto(`${relaying.url}/`)
      await page.fill('#token', ADMIN_TOKEN)
      await page.click('button[type=submit]')
      await expect.poll(() => page.isVisible('#relay')).toBe(true)
      expect(await page.textContent('#relay-sink')).toBe('into rabbitmq')
      expect(await page.textContent('#relay-pending')).toBe('1')
      expect(await page.textContent('#relay-error')).toMatch(/rabbitmq unavailable: connect ECONNREFUSED/)
      await page.close()
    } finally {
      await relaying.close()
    }
  })
})

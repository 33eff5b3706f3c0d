/**
 * `GET /`: one self-contained HTML page (inline style and script under a per-response CSP nonce; no external
 * assets, no framework): the relay's lag and last error (when SINK_URL is set), registrations, then per
 * registration and operation a live timeline of events, and the verification failures with their codes.
 */
import { script } from './script.js'
import { styles } from './styles.js'

/**
 * @example
 * const { html, csp } = renderPage()
 * return c.html(html, 200, { 'content-security-policy': csp })
 */
export function renderPage(): { html: string; csp: string } {
  const nonce = Buffer.from(crypto.getRandomValues(new Uint8Array(16))).toString('base64')
  const csp = [
    "default-src 'none'",
    `script-src 'nonce-${nonce}'`,
    `style-src 'nonce-${nonce}'`,
    "connect-src 'self'",
    "img-src 'self' data:",
    "base-uri 'none'",
    "form-action 'none'",
    "frame-ancestors 'none'",
  ].join('; ')
  const html = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>adwire receiver</title>
<style nonce="${nonce}">${styles}</style>
</head>
<body>
<header>
  <h1>adwire receiver</h1>
  <span>AdCP webhooks, verified and deduplicated</span>
  <span class="spacer"></span>
  <span id="status" class="pill">disconnected</span>
</header>
<main>
  <section class="panel">
    <form id="auth" autocomplete="off">
      <label for="token">Admin token</label>
      <input id="token" type="password" placeholder="ADMIN_TOKEN (printed at first start)" spellcheck="false">
      <button type="submit">Connect</button>
      <button type="button" id="forget" class="secondary" hidden>Forget token</button>
    </form>
    <p id="auth-error" class="error" role="alert"></p>
    <p class="hint">The token stays in this tab (sessionStorage). Create registrations with
      <code>pnpm adwire receiver register</code> or <code>POST /api/registrations</code>.</p>
  </section>
  <div id="content" hidden>
    <section class="panel" id="relay" hidden>
      <h2>Relay</h2>
      <p><span id="relay-sink"></span> · pending <strong id="relay-pending"></strong>
        <span id="relay-oldest"></span> · published <span id="relay-published"></span> since start</p>
      <p id="relay-error" class="error"></p>
    </section>
    <section class="panel">
      <h2>Registrations</h2>
      <table>
        <thead><tr><th>id</th><th>label</th><th>auth</th><th>shape</th><th>webhook url</th><th>created</th></tr></thead>
        <tbody id="registration-rows"></tbody>
      </table>
      <p id="no-registrations" class="empty" hidden>No registration yet.</p>
    </section>
    <section class="panel">
      <h2>Events by operation</h2>
      <div id="timelines"></div>
    </section>
  </div>
</main>
<script nonce="${nonce}">${script}</script>
</body>
</html>
`
  return { html, csp }
}

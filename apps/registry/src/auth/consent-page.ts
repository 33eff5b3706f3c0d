/** The sign-in and consent page of the authorization endpoint: plain HTML, no scripts. */

const escape = (value: string): string => value.replace(/[&<>"']/g, (char) => `&#${char.charCodeAt(0)};`)

export interface ConsentView {
  clientName: string
  clientId: string
  redirectUri: string
  scope: string
  /** The authorization request parameters, carried through the form as hidden fields. */
  hidden: Record<string, string>
  email?: string
  error?: string
}

/** Renders the page asking a member of an organization to sign in with the organization's API key. */
export function consentPage(view: ConsentView): string {
  const hidden = Object.entries(view.hidden)
    .map(([name, value]) => `<input type="hidden" name="${escape(name)}" value="${escape(value)}">`)
    .join('\n      ')
  const error = view.error ? `<p class="error" role="alert">${escape(view.error)}</p>` : ''
  return `<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <meta name="viewport" content="width=device-width, initial-scale=1">
  <title>Authorize ${escape(view.clientName)} · adwire registry</title>
  <style>
    body { font: 16px/1.5 system-ui, sans-serif; max-width: 34rem; margin: 3rem auto; padding: 0 1rem; color: #1d232a; }
    label { display: block; margin: 1rem 0 0.25rem; font-weight: 600; }
    input[type=email], input[type=password] { width: 100%; padding: 0.5rem; box-sizing: border-box; }
    .error { color: #a4262c; }
    .actions { margin-top: 1.5rem; display: flex; gap: 1rem; }
    code { background: #f3f4f6; padding: 0 0.25rem; }
  </style>
</head>
<body>
  <h1>Authorize ${escape(view.clientName)}</h1>
  <p><strong>${escape(view.clientName)}</strong> (<code>${escape(view.clientId)}</code>) asks to call this registry
  on your behalf with the scopes <code>${escape(view.scope)}</code>. After you approve, you return to
  <code>${escape(view.redirectUri)}</code>.</p>
  <p>Sign in as a member of your organization: your email and your organization's API key (<code>sk_…</code>).
  The key proves membership; it is not shared with the application.</p>
  ${error}
  <form method="post" action="authorize">
      ${hidden}
    <label for="email">Email</label>
    <input id="email" name="email" type="email" autocomplete="email" required value="${escape(view.email ?? '')}">
    <label for="api_key">Organization API key</label>
    <input id="api_key" name="api_key" type="password" autocomplete="off" required>
    <div class="actions">
      <button type="submit" name="decision" value="approve">Approve</button>
      <button type="submit" name="decision" value="deny" formnovalidate>Deny</button>
    </div>
  </form>
</body>
</html>`
}

/** A page for errors that must not be redirected to the client (unknown client, bad redirect URI). */
export function errorPage(message: string): string {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Authorization error · adwire registry</title></head>
<body><h1>Authorization error</h1><p>${escape(message)}</p></body></html>`
}

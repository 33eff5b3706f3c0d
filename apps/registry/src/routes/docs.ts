/** `/openapi.json` and `/docs`: the served OpenAPI document and a small self-contained HTML reference of it. */
import { Hono } from 'hono'
import { operations, registryDocument } from '../spec/openapi.js'

const escape = (text: string) =>
  text.replace(
    /[&<>"']/g,
    (char) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[char]!,
  )

/** The HTML reference, grouped by tag; implemented operations are marked. */
export function docsPage(implemented: ReadonlySet<string>): string {
  const byTag = new Map<string, ReturnType<typeof operations>>()
  for (const op of operations()) byTag.set(op.tag, [...(byTag.get(op.tag) ?? []), op])
  const sections = [...byTag].map(([tag, ops]) => {
    const rows = ops.map((op) => {
      const params = (
        (op.raw.parameters as Array<{ name: string; in: string; required?: boolean }> | undefined) ?? []
      )
        .map((param) => `<code>${escape(param.in)}:${escape(param.name)}${param.required ? '*' : ''}</code>`)
        .join(' ')
      return `<tr class="${implemented.has(op.operationId) ? 'yes' : 'no'}"><td><b>${op.method.toUpperCase()}</b></td><td><code>${escape(op.path)}</code></td><td id="${escape(op.operationId)}">${escape(op.operationId)}${op.secured ? ' 🔒' : ''}</td><td>${escape(String(op.raw.summary ?? ''))}<br>${params}</td><td>${implemented.has(op.operationId) ? 'served' : 'not yet'}</td></tr>`
    })
    return `<h2>${escape(tag)}</h2><table><tr><th>method</th><th>path</th><th>operation</th><th>summary, parameters</th><th>here</th></tr>${rows.join('')}</table>`
  })
  const info = registryDocument().info as { title?: string; version?: string }
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${escape(info.title ?? 'Registry API')}</title>
<style>body{font:14px system-ui,sans-serif;margin:2rem;max-width:80rem}table{border-collapse:collapse;width:100%}td,th{border-bottom:1px solid #ddd;padding:.3rem;text-align:left;vertical-align:top}tr.no{color:#999}code{font-size:12px}</style></head>
<body><h1>${escape(info.title ?? 'Registry API')} <small>${escape(info.version ?? '')}</small></h1>
<p>The full document is at <a href="/openapi.json">/openapi.json</a>. 🔒 = <code>Authorization: Bearer</code> with an organization API key or a user access token. Errors are <code>{"error":{"code","message"}}</code>.</p>
${sections.join('\n')}</body></html>`
}

/** The docs routes. */
export function docsRoutes(implemented: ReadonlySet<string>): Hono {
  const app = new Hono()
  app.get('/openapi.json', (c) => c.json(registryDocument()))
  let page: string | undefined
  app.get('/docs', (c) => c.html((page ??= docsPage(implemented))))
  return app
}

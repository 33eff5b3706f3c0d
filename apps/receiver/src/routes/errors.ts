/** JSON error answers: `{"error":{"code","message","details"?}}`, the shape the receiver core uses too. */
import type { Context } from 'hono'
import type { ContentfulStatusCode } from 'hono/utils/http-status'
import type { AdminAuth } from '../admin.js'
import type { InputProblem } from '../registration-input.js'

export function errorResponse(
  c: Context,
  status: ContentfulStatusCode,
  code: string,
  message: string,
  details?: readonly InputProblem[],
  headers: Record<string, string> = {},
): Response {
  return c.json({ error: { code, message, ...(details ? { details } : {}) } }, status, {
    'cache-control': 'no-store',
    ...headers,
  })
}

/** 401 without a Bearer token, 403 with a wrong one; undefined when the token is right. */
export function adminProblem(c: Context, admin: AdminAuth): Response | undefined {
  const verdict = admin.check(c.req.header('authorization'))
  if (verdict === 'ok') return undefined
  if (verdict === 'missing') {
    return errorResponse(
      c,
      401,
      'unauthorized',
      'send the admin token as Authorization: Bearer <ADMIN_TOKEN>',
      undefined,
      { 'www-authenticate': 'Bearer realm="adwire-receiver"' },
    )
  }
  return errorResponse(c, 403, 'forbidden', 'the admin token is not valid')
}

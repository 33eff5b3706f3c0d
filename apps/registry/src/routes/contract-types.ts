/**
 * Request and response bodies of the registry's operations, typed from the OpenAPI document through the types
 * `@adwire/registry-client` generates from it (`paths`), so a route answers the shape the document declares.
 */
import type { paths } from '@adwire/registry-client'

type Method = 'get' | 'put' | 'post' | 'delete' | 'patch'
type Operation<Path extends keyof paths, M extends Method> = NonNullable<paths[Path][M]>
type JsonOf<Content> = Content extends { content: { 'application/json': infer Body } } ? Body : never

/**
 * The JSON body `Path` answers to `M` with `Status` (200 unless given).
 *
 * @example
 * const body: ResponseBody<'/api/registry/agents/{encodedUrl}/monitoring/requeue', 'post'> = { requeued: true }
 */
export type ResponseBody<Path extends keyof paths, M extends Method, Status extends number = 200> =
  Operation<Path, M> extends { responses: infer Responses }
    ? Status extends keyof Responses
      ? JsonOf<Responses[Status]>
      : never
    : never

/**
 * The JSON request body of `M` on `Path`.
 *
 * @example
 * const body = await readBody<RequestBody<'/api/registry/agents/{encodedUrl}/lifecycle', 'put'>>(c, 'updateAgentLifecycle')
 */
export type RequestBody<Path extends keyof paths, M extends Method> =
  Operation<Path, M> extends { requestBody?: infer Request } ? JsonOf<NonNullable<Request>> : never

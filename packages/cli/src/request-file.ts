import type { HttpMessage } from '@adwire/http-signatures'
import { UsageError, type Io } from './io.js'

/** A request as the CLI reads and writes it: the `request` object of an AdCP signing vector. */
export interface RequestFile {
  method: string
  url: string
  headers: Record<string, string>
  body: string
}

const decoder = new TextDecoder('utf-8', { fatal: true })

/** Reads and decodes a JSON file, or standard input for `-`; anything unreadable is a usage error (exit 2). */
export async function readJsonFile(io: Io, path: string, what: string): Promise<unknown> {
  let text: string
  try {
    text = decoder.decode(await io.read(path))
  } catch (error) {
    throw new UsageError(`cannot read ${what} ${path}: ${(error as Error).message}`)
  }
  try {
    return JSON.parse(text)
  } catch (error) {
    throw new UsageError(`${what} ${path} is not JSON: ${(error as Error).message}`)
  }
}

/** Reads a request file: `{"method","url","headers":{…},"body":"…"}`. */
export async function readRequestFile(io: Io, path: string): Promise<RequestFile> {
  const value = (await readJsonFile(io, path, 'request file')) as Partial<RequestFile> | null
  const problems: string[] = []
  if (!value || typeof value !== 'object' || Array.isArray(value))
    throw new UsageError(`request file ${path} must hold a JSON object`)
  if (typeof value.method !== 'string' || value.method === '') problems.push('"method" must be a string')
  if (typeof value.url !== 'string' || !URL.canParse(value.url))
    problems.push('"url" must be an absolute URL')
  if (
    !value.headers ||
    typeof value.headers !== 'object' ||
    Object.values(value.headers).some((header) => typeof header !== 'string')
  ) {
    problems.push('"headers" must map names to strings')
  }
  if (value.body !== undefined && typeof value.body !== 'string') problems.push('"body" must be a string')
  if (problems.length > 0) throw new UsageError(`request file ${path}: ${problems.join('; ')}`)
  return { method: value.method!, url: value.url!, headers: { ...value.headers! }, body: value.body ?? '' }
}

/** The request as the library takes it. */
export const toMessage = (request: RequestFile): HttpMessage => ({
  method: request.method,
  url: request.url,
  headers: request.headers,
  body: request.body,
})

/** Reads `--now SECONDS` (Unix seconds) when given. */
export function parseNow(value: string | undefined): number | undefined {
  if (value === undefined) return undefined
  if (!/^\d{1,12}$/.test(value)) throw new UsageError(`--now must be Unix seconds, not "${value}"`)
  return Number(value)
}

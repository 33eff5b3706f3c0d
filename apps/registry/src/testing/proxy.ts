/**
 * A proxy on 127.0.0.1 in front of an agent whose every request waits until the test lets it go on: held a fixed
 * time (a run stays in flight long enough to stop it) or until a gate opens (a worker dies mid-run).
 */
import { createServer, request as httpRequest } from 'node:http'
import type { AddressInfo } from 'node:net'

export interface HoldingProxy {
  /** `http://127.0.0.1:{port}`; the agent's paths are the same behind it. */
  readonly url: string
  /** Cuts every connection and stops listening. */
  close(): Promise<void>
}

/**
 * Starts a proxy to `target` (an origin) on 127.0.0.1, port 0. Each request is handed to `hold` with the function
 * that forwards it; `hold` calls it at once, later, or keeps it for the test to call. Each forwarded request gets
 * its own upstream connection: a pooled one may be left mid-exchange by a client that went away (a dead worker's
 * held request, an MCP event stream cut when the registry stops its compliance worker), and the agent would
 * answer the next request sent on it with a bare `400`. A client that leaves before its body is sent aborts the
 * upstream request.
 *
 * @example
 * const slow = await startHoldingProxy(agent.url, (forward) => setTimeout(forward, 250))
 * const agentUrl = `${slow.url}/mcp`
 * await slow.close()
 */
export async function startHoldingProxy(
  target: string,
  hold: (forward: () => void) => void,
): Promise<HoldingProxy> {
  const upstream = new URL(target)
  // The upstream requests still open: closing cuts them too, so the agent is not left serving a stream (an MCP
  // event stream, a held request released at the end) to nobody until its own close times out.
  const upstreams = new Set<ReturnType<typeof httpRequest>>()
  const server = createServer((incoming, outgoing) => {
    hold(() => {
      const proxied = httpRequest(
        {
          host: upstream.hostname,
          port: upstream.port,
          path: incoming.url,
          method: incoming.method,
          headers: { ...incoming.headers, host: upstream.host },
          agent: false,
        },
        (response) => {
          outgoing.writeHead(response.statusCode ?? 502, response.headers)
          response.pipe(outgoing)
        },
      )
      upstreams.add(proxied)
      proxied.on('close', () => upstreams.delete(proxied))
      proxied.on('error', () => outgoing.destroy())
      incoming.on('close', () => {
        if (!incoming.complete) proxied.destroy()
      })
      incoming.pipe(proxied)
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close() {
      server.closeAllConnections()
      for (const proxied of upstreams) proxied.destroy()
      return new Promise<void>((resolve) => server.close(() => resolve()))
    },
  }
}

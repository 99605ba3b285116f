import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { metricsRegistry } from './metrics.ts';

/** Where `/metrics` is served: its own address and port, never the API's (issue 28). */
export interface MetricsListen {
  host: string;
  port: number;
}

/**
 * The metrics listener: `GET /metrics` answers the Prometheus text format of `metricsRegistry`; anything else
 * 404. It is a server of its own so that the metrics are reachable only where the operator binds them (a
 * private interface, a port the balancer does not forward), never through the public API by accident.
 *
 * @example
 * const metrics = await listenForMetrics({ host: '127.0.0.1', port: 9464 });
 * await metrics.close();
 */
export async function listenForMetrics(
  where: MetricsListen,
): Promise<{ url: string; server: Server; close(): Promise<void> }> {
  const server = createServer((req, res) => {
    const path = (req.url ?? '').split('?')[0];
    if (path !== '/metrics' || (req.method !== 'GET' && req.method !== 'HEAD')) {
      res.writeHead(404, { 'content-type': 'text/plain; charset=utf-8' }).end('Not found: GET /metrics\n');
      return;
    }
    metricsRegistry.metrics().then(
      (text) => {
        res.writeHead(200, { 'content-type': metricsRegistry.contentType, 'cache-control': 'no-store' });
        res.end(req.method === 'HEAD' ? undefined : text);
      },
      (error: unknown) => {
        res.writeHead(500, { 'content-type': 'text/plain; charset=utf-8' });
        res.end(
          `metrics could not be collected: ${error instanceof Error ? error.message : String(error)}\n`,
        );
      },
    );
  });
  server.listen(where.port, where.host);
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  const host = where.host.includes(':') ? `[${where.host}]` : where.host;
  return {
    url: `http://${host}:${port}/metrics`,
    server,
    async close() {
      const closed = once(server, 'close');
      server.close();
      server.closeAllConnections();
      await closed;
    },
  };
}

import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  capConnections,
  capConnectionsPerAddress,
  refusedByConnectionCap,
} from '../internal/connection-cap.ts';
import { loadWidgetRelease, type WidgetRelease } from './widget-assets.ts';
import {
  type HostedPagesHandler,
  refuseOverAddressCap,
  refuseOverTotalCap,
  widgetHostHandler,
} from './widget-host.ts';

/** What `start()` resolves as `widgetUrls`: the scripts are at `${test}/latest/widget.js` and `${live}/latest/widget.js`. */
export interface WidgetUrls {
  /** Base URL of the test widget host (`{dev_cdn_url}`), e.g. `http://127.0.0.1:4243`. */
  test: string;
  /** Base URL of the production widget host (`{cdn_url}`), e.g. `http://127.0.0.1:4244`. */
  live: string;
}

const baseUrl = (host: string, server: Server) => {
  const { port } = server.address() as AddressInfo;
  return `http://${host.includes(':') ? `[${host}]` : host}:${port}`;
};

/**
 * Both widget hosts of the reference server, each its own HTTP server on its own port (0 picks a free one),
 * so each has its own origin: the test host and the production host. `origins()` is what the API's CORS
 * allows on the checkout's routes. Like the API server, each host holds at most `maxConnections` open
 * connections in all (`capConnections`) and, with `maxConnectionsPerAddress`, at most that many from one client
 * address (`capConnectionsPerAddress`), answering one more a 503 page at once; and it cuts a request whose
 * headers (or whole request) are not in within `headersTimeoutMs` (`requestTimeoutMs`) with Node's 408.
 *
 * @example
 * const hosts = new WidgetHosts({
 *   host: '127.0.0.1', testPort: 4243, livePort: 4244, apiUrl: () => url,
 *   headersTimeoutMs: 10_000, requestTimeoutMs: 15_000, maxConnections: 2048,
 * });
 * const urls = await hosts.listen(); // { test: 'http://127.0.0.1:4243', live: 'http://127.0.0.1:4244' }
 */
export class WidgetHosts {
  private servers: { test: Server; live: Server } | undefined;
  private current: WidgetUrls | undefined;
  private allowed: ReadonlySet<string> = new Set();
  private release: WidgetRelease | undefined;

  constructor(
    private readonly options: {
      host: string;
      testPort: number;
      livePort: number;
      apiUrl: () => string;
      /** The hosted checkout and payment links' pages, served by both hosts (issue 36). */
      pages?: HostedPagesHandler;
      /** How long a request's headers may take to arrive on each host (Node's default is 60 s). */
      headersTimeoutMs: number;
      /** How long a whole request, body included, may take to arrive (Node's default is 300 s). */
      requestTimeoutMs: number;
      /** Open connections each host holds in all, every peer counted; one more is answered 503 at once and closed. */
      maxConnections: number;
      /**
       * Open connections one client address may hold on each host (the API's `maxConnectionsPerAddress`); one
       * more is answered 503 at once and closed. Default: no cap.
       */
      maxConnectionsPerAddress?: number;
      /** Peers that cap does not count (trusted load balancers, which carry every client). */
      uncappedPeer?: (address: string) => boolean;
    },
  ) {}

  /** Base URLs once listening (throws before). */
  get urls(): WidgetUrls {
    if (!this.current) throw new Error('widget hosts are not listening yet');
    return this.current;
  }

  /** Base URLs once listening, `undefined` before (a service used without `start`, as tools and tests do). */
  get listeningUrls(): WidgetUrls | undefined {
    return this.current;
  }

  /** The exact origins of both hosts (with the `localhost` spelling of a loopback address). */
  origins(): ReadonlySet<string> {
    return this.allowed;
  }

  async listen(): Promise<WidgetUrls> {
    const release = () => {
      this.release ??= loadWidgetRelease();
      return this.release;
    };
    const { headersTimeoutMs, requestTimeoutMs, maxConnections, maxConnectionsPerAddress, uncappedPeer } =
      this.options;
    const make = (environment: 'test' | 'live') => {
      const handler = widgetHostHandler({
        environment,
        release,
        apiUrl: this.options.apiUrl,
        hostUrls: () => this.urls,
        ...(this.options.pages ? { pages: this.options.pages } : {}),
      });
      const server = createServer(
        {
          // Node's 60 s for headers would let a slow-header client hold a place (a descriptor) for a minute; a
          // browser sends a GET's headers as soon as it connects, so the API's 10 s is ample here too.
          headersTimeout: headersTimeoutMs,
          // A GET is complete with its headers: this bounds only a payment link's form (8 KB at most).
          requestTimeout: requestTimeoutMs,
          // How often Node looks for requests past those timeouts (its default, 30 s, would add up to 30 s).
          connectionsCheckingInterval: Math.max(50, Math.min(1000, Math.floor(headersTimeoutMs / 4))),
          // An idle kept-alive connection closes after 5 s, as on the API (Node's default, said out loud): a
          // page's files are asked for within that, and an idle socket holds a place under both caps.
          keepAliveTimeout: 5_000,
        },
        (req, res) => {
          // Refused and closing: a request already on the wire gets no page read (nor budget spent) for it.
          if (refusedByConnectionCap(req.socket)) return;
          handler(req, res);
        },
      );
      // The total first: a connection over it is refused as such, whatever its address holds.
      capConnections(server, { maxConnections, refuse: refuseOverTotalCap });
      if (maxConnectionsPerAddress !== undefined) {
        capConnectionsPerAddress(server, {
          maxConnectionsPerAddress,
          ...(uncappedPeer ? { uncappedPeer } : {}),
          refuse: refuseOverAddressCap,
        });
      }
      return server;
    };
    const test = make('test');
    const live = make('live');
    this.servers = { test, live };
    test.listen(this.options.testPort, this.options.host);
    live.listen(this.options.livePort, this.options.host);
    await Promise.all([once(test, 'listening'), once(live, 'listening')]);
    this.current = { test: baseUrl(this.options.host, test), live: baseUrl(this.options.host, live) };
    const origins = new Set<string>();
    for (const url of [this.current.test, this.current.live]) {
      origins.add(url);
      const parsed = new URL(url);
      if (parsed.hostname === '127.0.0.1' || parsed.hostname === '[::1]') {
        origins.add(`${parsed.protocol}//localhost:${parsed.port}`);
      }
    }
    this.allowed = origins;
    return this.current;
  }

  async close(): Promise<void> {
    if (!this.servers) return;
    const servers = Object.values(this.servers);
    this.servers = undefined;
    await Promise.all(
      servers.map(async (server) => {
        if (!server.listening) return;
        const closed = once(server, 'close');
        server.close();
        server.closeAllConnections();
        await closed;
      }),
    );
  }
}

import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { capConnectionsPerAddress } from './internal/connection-cap.ts';
import { type ExpressPrototypes, messageClassesFor } from './internal/message-classes.ts';
import { newRequestId } from './internal/random.ts';
import { answerUnparsableRequest, writeRaw, writeResponse } from './middleware/client-error.ts';

export interface ApiServerOptions {
  /** How long the request headers may take to arrive. */
  headersTimeoutMs: number;
  /** How long the whole request, body included, may take to arrive (a body shorter than its Content-Length). */
  requestTimeoutMs: number;
  /** Open connections answered normally; the requests of any beyond get 503 and their connection is closed. */
  maxConnections: number;
  /**
   * Open connections one peer address may hold (an IPv6 peer counts by its /64); one beyond is answered 503 at
   * once, before it sends a byte, and closed. Default: no cap of its own (only `maxConnections`).
   */
  maxConnectionsPerAddress?: number;
  /** Peers the per-address cap does not count (trusted load balancers, which carry every client). */
  uncappedPeer?: (address: string) => boolean;
  /**
   * Asked first about every request that gets this far (under the connection cap, with a `Host`): answers it
   * itself and returns true, or returns false to hand it to the app. For answers cheaper than the app's
   * routing and middleware (`refuseOverBudgetEarly`, the 429 of a business over its budget).
   */
  beforeApp?: (req: IncomingMessage, res: ServerResponse) => Promise<boolean>;
}

/** An express app has the prototypes it gives every request and response; a bare listener has not. */
const isExpressApp = (handler: object): handler is ExpressPrototypes =>
  'request' in handler &&
  typeof handler.request === 'object' &&
  'response' in handler &&
  typeof handler.response === 'object';

const OVER_CAP = Symbol('servicepay.overConnectionCap');

/** Beyond the soft cap, a margin of connections still answered 503; past it Node refuses them outright. */
const CAP_MARGIN = 64;

/** A peer over its own connection cap: answered at once on the bare socket (`capConnectionsPerAddress` closes it). */
function refuseConnection(socket: Socket): void {
  writeRaw(
    socket,
    {
      status: 503,
      reason: 'Service Unavailable',
      code: 'service_unavailable',
      message: 'This address has too many open connections to the service; close some, then retry.',
      headers: { 'Retry-After': '1' },
    },
    newRequestId(),
  );
}

/**
 * The HTTP server the API listens with. Every request gets its answer in the envelope with a `Request-Id`,
 * including those Node would answer itself, bare: no `Host` header on HTTP/1.1 (400), an `Expect` other than
 * `100-continue` (417), `CONNECT` (405, where Node would just drop the socket), headers or a body that arrive
 * too slowly (408, after `headersTimeoutMs`/`requestTimeoutMs` instead of Node's 60 s/300 s), and requests on
 * a connection over `maxConnections` (503, then the connection closes). One peer address holds at most
 * `maxConnectionsPerAddress` connections (`uncappedPeer` exempt; `capConnectionsPerAddress`): one more is answered
 * 503 the moment it is accepted and closed, so a flood of idle sockets from one address never takes the places every other client
 * needs. Past `maxConnections` + 64, Node refuses connections before a byte is read. `beforeApp` may
 * answer a request before the app sees it (the 429 of a business over its budget). When `handler` is an
 * express app, its requests and responses are made with the app's prototypes already in place
 * (`messageClassesFor`), so express does not change them on arrival.
 *
 * @example
 * const server = createApiServer(createApp(deps), { headersTimeoutMs: 10_000, requestTimeoutMs: 30_000, maxConnections: 4096 });
 * server.listen(4242, '127.0.0.1');
 */
export function createApiServer(
  handler: (req: IncomingMessage, res: ServerResponse) => void,
  options: ApiServerOptions,
): Server {
  let open = 0;
  const beforeApp = options.beforeApp;
  const server = createServer(
    {
      headersTimeout: options.headersTimeoutMs,
      requestTimeout: options.requestTimeoutMs,
      // How often Node looks for requests past those timeouts (60 s/30 s by default, far too coarse here).
      connectionsCheckingInterval: Math.max(50, Math.min(1000, Math.floor(options.headersTimeoutMs / 4))),
      // Answered in the envelope below rather than bare by Node.
      requireHostHeader: false,
      // An express app's requests and responses are made with its prototypes in place (messageClassesFor).
      ...(isExpressApp(handler) ? messageClassesFor(handler) : {}),
    },
    (req, res) => {
      if ((req.socket as Socket & { [OVER_CAP]?: boolean })[OVER_CAP]) {
        writeResponse(res, {
          status: 503,
          reason: 'Service Unavailable',
          code: 'service_unavailable',
          message: 'The service has too many open connections; retry shortly.',
          headers: { 'Retry-After': '1' },
        });
        return;
      }
      if (req.httpVersionMajor === 1 && req.httpVersionMinor >= 1 && req.headers.host === undefined) {
        writeResponse(res, {
          status: 400,
          reason: 'Bad Request',
          code: 'bad_request',
          message: 'An HTTP/1.1 request must carry a Host header.',
        });
        return;
      }
      if (!beforeApp) return handler(req, res);
      // The request's body waits, unread, in its stream until the app reads it.
      beforeApp(req, res).then(
        (answered) => {
          if (!answered) handler(req, res);
        },
        // The lookup failed (the database is unreachable): the app answers, and its own lookup fails the same way.
        () => handler(req, res),
      );
    },
  );
  server.maxConnections = options.maxConnections + CAP_MARGIN;
  server.on('connection', (socket: Socket & { [OVER_CAP]?: boolean }) => {
    open += 1;
    if (open > options.maxConnections) socket[OVER_CAP] = true;
    socket.once('close', () => {
      open -= 1;
    });
  });
  // The per-address cap, shared with the widget hosts: its own 'connection' listener, after the total's.
  if (options.maxConnectionsPerAddress !== undefined) {
    capConnectionsPerAddress(server, {
      maxConnectionsPerAddress: options.maxConnectionsPerAddress,
      ...(options.uncappedPeer ? { uncappedPeer: options.uncappedPeer } : {}),
      refuse: refuseConnection,
    });
  }
  server.on('clientError', answerUnparsableRequest);
  server.on('checkExpectation', (_req: IncomingMessage, res: ServerResponse) => {
    writeResponse(res, {
      status: 417,
      reason: 'Expectation Failed',
      code: 'expectation_failed',
      message: 'The only Expect this service understands is 100-continue.',
    });
  });
  server.on('connect', (_req: IncomingMessage, socket: Socket) => {
    // Node hands the socket over without its own error handling: a client that resets must not crash us.
    socket.on('error', () => socket.destroy());
    writeRaw(
      socket,
      {
        status: 405,
        reason: 'Method Not Allowed',
        code: 'method_not_allowed',
        message: 'CONNECT is not served here: this is an API, not a proxy.',
        headers: { Allow: 'GET, HEAD, POST, PATCH, DELETE, OPTIONS' },
      },
      newRequestId(),
    );
  });
  return server;
}

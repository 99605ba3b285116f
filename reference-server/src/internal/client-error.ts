import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { ErrorBody, ErrorCode } from '@servicepay/node/protocol';
import { type ExpressPrototypes, messageClassesFor } from './message-classes.ts';
import { addressKeyOf } from './peer-address.ts';
import { newRequestId } from './random.ts';

/** What a request that never reaches the routes is answered with. */
interface BareAnswer {
  status: number;
  reason: string;
  code: ErrorCode;
  message: string;
  headers?: Record<string, string>;
}

/** The envelope of an answer given outside express: the same shape, code and `Request-Id` as any other. */
function envelope(answer: BareAnswer, requestId: string): string {
  const body: ErrorBody = {
    meta: { statusCode: answer.status, message: answer.message, code: answer.code, requestId },
  };
  return JSON.stringify(body);
}

/** The answer written straight to a socket (Node's parser gave up, or a CONNECT): always closes it. */
function writeRaw(socket: Socket, answer: BareAnswer, requestId: string): void {
  const body = envelope(answer, requestId);
  const extra = Object.entries(answer.headers ?? {})
    .map(([name, value]) => `${name}: ${value}\r\n`)
    .join('');
  socket.end(
    `HTTP/1.1 ${answer.status} ${answer.reason}\r\n` +
      `Content-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\n` +
      `Request-Id: ${requestId}\r\nCache-Control: no-store\r\n${extra}Connection: close\r\n\r\n${body}`,
  );
}

/** The answer through a response object Node already made (Expect, no Host, over the connection cap). */
function writeResponse(res: ServerResponse, answer: BareAnswer): void {
  const requestId = newRequestId();
  const body = envelope(answer, requestId);
  res.shouldKeepAlive = false;
  res.writeHead(answer.status, {
    'Content-Type': 'application/json; charset=utf-8',
    'Content-Length': String(Buffer.byteLength(body)),
    'Request-Id': requestId,
    'Cache-Control': 'no-store',
    Connection: 'close',
    ...answer.headers,
  });
  res.end(body);
}

type CurrentResponse = { headersSent?: boolean; getHeader?: (name: string) => unknown };

/**
 * Node answers a request it cannot parse (bytes above 0x7f in the request line, oversized headers) or that took
 * too long to arrive itself, with a bare status and no body. This writes the same answer in the envelope every
 * other response uses, with a `Request-Id` (the request's own, if express had already given it one):
 * 431 `bad_request` for oversized headers, 408 `request_timeout` when the headers or the body did not arrive
 * in time, 400 `bad_request` for the rest.
 *
 * @example
 * server.on('clientError', answerUnparsableRequest);
 */
export function answerUnparsableRequest(error: Error & { code?: string }, socket: Socket): void {
  // As Node itself does: once a response on this socket has started, a second one would corrupt the stream.
  const current = (socket as Socket & { _httpMessage?: CurrentResponse })._httpMessage;
  if (!socket.writable || error.code === 'ECONNRESET' || current?.headersSent) {
    socket.destroy();
    return;
  }
  const given = current?.getHeader?.('request-id');
  const requestId = typeof given === 'string' ? given : newRequestId();
  if (error.code === 'HPE_HEADER_OVERFLOW') {
    writeRaw(
      socket,
      {
        status: 431,
        reason: 'Request Header Fields Too Large',
        code: 'bad_request',
        message: 'The request headers are too large.',
      },
      requestId,
    );
  } else if (error.code === 'ERR_HTTP_REQUEST_TIMEOUT') {
    writeRaw(
      socket,
      {
        status: 408,
        reason: 'Request Timeout',
        code: 'request_timeout',
        message: 'The request did not arrive in time; send it again, whole.',
      },
      requestId,
    );
  } else {
    writeRaw(
      socket,
      { status: 400, reason: 'Bad Request', code: 'bad_request', message: 'The request is not valid HTTP.' },
      requestId,
    );
  }
}

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

/** A peer over its own connection cap: answered at once on the bare socket, which is then closed. */
function refuseConnection(socket: Socket): void {
  // Closed for good once the answer is out, without waiting for the peer to close its side.
  socket.once('finish', () => socket.destroy());
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
 * `maxConnectionsPerAddress` connections (`uncappedPeer` exempt): one more is answered 503 the moment it is
 * accepted and closed, so a flood of idle sockets from one address never takes the places every other client
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
  const perAddressCap = options.maxConnectionsPerAddress ?? Number.POSITIVE_INFINITY;
  const heldByAddress = new Map<string, number>();
  server.on('connection', (socket: Socket & { [OVER_CAP]?: boolean }) => {
    open += 1;
    if (open > options.maxConnections) socket[OVER_CAP] = true;
    socket.once('close', () => {
      open -= 1;
    });
    const peer = socket.remoteAddress;
    // Gone already (reset before it was accepted), or a balancer: nothing to count.
    if (peer === undefined || perAddressCap === Number.POSITIVE_INFINITY || options.uncappedPeer?.(peer))
      return;
    const address = addressKeyOf(peer);
    const held = (heldByAddress.get(address) ?? 0) + 1;
    heldByAddress.set(address, held);
    socket.once('close', () => {
      const left = (heldByAddress.get(address) ?? 1) - 1;
      if (left > 0) heldByAddress.set(address, left);
      else heldByAddress.delete(address);
    });
    if (held > perAddressCap) refuseConnection(socket);
  });
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

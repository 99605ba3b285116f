import type { ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { ErrorCode } from '@servicepay/node/protocol';
import { newRequestId } from '../internal/random.ts';
import { errorEnvelopeText } from './envelope.ts';

/** What a request that never reaches the routes is answered with. */
export interface BareAnswer {
  status: number;
  reason: string;
  code: ErrorCode;
  message: string;
  headers?: Record<string, string>;
}

/** The envelope of an answer given outside express: the same shape, code and `Request-Id` as any other. */
const envelope = (answer: BareAnswer, requestId: string): string =>
  errorEnvelopeText(answer.status, answer.code, answer.message, requestId);

/**
 * The answer written straight to a socket (Node's parser gave up, or a CONNECT): always closes it.
 *
 * @example
 * writeRaw(socket, { status: 400, reason: 'Bad Request', code: 'bad_request', message: '…' }, newRequestId());
 */
export function writeRaw(socket: Socket, answer: BareAnswer, requestId: string): void {
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

/**
 * The answer through a response object Node already made (Expect, no Host, over the connection cap).
 *
 * @example
 * writeResponse(res, { status: 417, reason: 'Expectation Failed', code: 'expectation_failed', message: '…' });
 */
export function writeResponse(res: ServerResponse, answer: BareAnswer): void {
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

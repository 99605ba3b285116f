import type { Socket } from 'node:net';

/**
 * Node answers a request it cannot parse (bytes above 0x7f in the request line, oversized headers) itself,
 * with a bare 400 and no body. This writes the same answer in the envelope every other response uses.
 */
export function answerUnparsableRequest(error: Error & { code?: string }, socket: Socket): void {
  // As Node itself does: once a response on this socket has started, a second one would corrupt the stream.
  const current = (socket as Socket & { _httpMessage?: { headersSent?: boolean } })._httpMessage;
  if (!socket.writable || error.code === 'ECONNRESET' || current?.headersSent) {
    socket.destroy();
    return;
  }
  const status = error.code === 'HPE_HEADER_OVERFLOW' ? 431 : 400;
  const message = status === 431 ? 'The request headers are too large.' : 'The request is not valid HTTP.';
  const body = JSON.stringify({ meta: { statusCode: status, message, code: 'bad_request' } });
  socket.end(
    `HTTP/1.1 ${status} ${status === 431 ? 'Request Header Fields Too Large' : 'Bad Request'}\r\n` +
      `Content-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\n` +
      `Connection: close\r\n\r\n${body}`,
  );
}

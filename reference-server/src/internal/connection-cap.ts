import type { Server } from 'node:http';
import type { Socket } from 'node:net';
import { addressKeyOf } from './peer-address.ts';

/** How one listener caps the connections a single peer address may hold. */
export interface PerAddressCap {
  /** Open connections one peer address may hold (an IPv6 peer counts by its /64); one more is refused. */
  maxConnectionsPerAddress: number;
  /** Peers not counted at all (trusted load balancers, which carry every client). */
  uncappedPeer?: (address: string) => boolean;
  /**
   * Writes the answer to a connection over the cap straight to its bare socket and ends it (`socket.end(...)`):
   * it is written before the peer has sent a byte, so it cannot depend on the request.
   */
  refuse: (socket: Socket) => void;
}

/** How one listener caps its open connections in all (`capConnections`). */
export interface TotalCap {
  /** Open connections in all, every peer counted (trusted proxies too); one more is refused. */
  maxConnections: number;
  /** As `PerAddressCap.refuse`: the answer to a connection over the cap, written on its bare socket. */
  refuse: (socket: Socket) => void;
}

/** Beyond the total cap, a margin of connections still answered by `refuse`; past it Node drops them unread. */
export const TOTAL_CAP_MARGIN = 64;

const REFUSED = Symbol('servicepay.refusedByConnectionCap');

/** Answers `socket` with `refuse` (once, whichever cap finds it first) and closes it when the answer is out. */
function refuseOnce(socket: Socket & { [REFUSED]?: true }, refuse: (socket: Socket) => void): void {
  if (socket[REFUSED]) return;
  socket[REFUSED] = true;
  // Closed for good once the answer is out, without waiting for the peer to close its side.
  socket.once('finish', () => socket.destroy());
  refuse(socket);
}

/**
 * Whether `socket` was refused by `capConnectionsPerAddress` or `capConnections`: a request the peer had already sent on it may
 * still be parsed before the socket is gone, and a handler that would do work for it can return at once.
 *
 * @example
 * if (refusedByConnectionCap(req.socket)) return;
 */
export function refusedByConnectionCap(socket: Socket): boolean {
  return (socket as Socket & { [REFUSED]?: true })[REFUSED] === true;
}

/**
 * Caps the open connections each peer address holds on `server` (the API server and both widget hosts use
 * it, each listener counting its own): one beyond `maxConnectionsPerAddress` is answered by `refuse` the moment
 * it is accepted, before it sends a byte, and destroyed once that answer is out, without waiting for the peer
 * to close its side. A flood of idle sockets from one address thus never holds more than the cap, and a real
 * client over it gets an answer rather than a hang. A place frees when its connection closes.
 *
 * @example
 * capConnectionsPerAddress(server, { maxConnectionsPerAddress: 256, refuse: (socket) => socket.end(answer) });
 */
export function capConnectionsPerAddress(server: Server, cap: PerAddressCap): void {
  const heldByAddress = new Map<string, number>();
  server.on('connection', (socket: Socket & { [REFUSED]?: true }) => {
    const peer = socket.remoteAddress;
    // Gone already (reset before it was accepted), or a balancer: nothing to count.
    if (peer === undefined || cap.uncappedPeer?.(peer)) return;
    const address = addressKeyOf(peer);
    const held = (heldByAddress.get(address) ?? 0) + 1;
    heldByAddress.set(address, held);
    socket.once('close', () => {
      const left = (heldByAddress.get(address) ?? 1) - 1;
      if (left > 0) heldByAddress.set(address, left);
      else heldByAddress.delete(address);
    });
    if (held <= cap.maxConnectionsPerAddress) return;
    refuseOnce(socket, cap.refuse);
  });
}

/**
 * Caps the open connections `server` holds in all, every peer counted (a trusted proxy too: the total is what
 * bounds the process's file descriptors and memory, whoever holds them). One beyond `maxConnections` is
 * answered by `refuse` the moment it is accepted and closed once the answer is out, as over the per-address
 * cap, so a real client gets an answer rather than a hang; past `maxConnections` + 64 (`TOTAL_CAP_MARGIN`)
 * Node drops a connection before a byte is read or written (`server.maxConnections`), so a flood costs no
 * answers either. A place frees when its connection closes. Used by the widget hosts; the API server counts
 * its own total, since it answers those requests in the envelope (`createApiServer`).
 *
 * @example
 * capConnections(server, { maxConnections: 2048, refuse: (socket) => socket.end(answer) });
 */
export function capConnections(server: Server, cap: TotalCap): void {
  let open = 0;
  server.maxConnections = cap.maxConnections + TOTAL_CAP_MARGIN;
  server.on('connection', (socket: Socket) => {
    open += 1;
    socket.once('close', () => {
      open -= 1;
    });
    if (open > cap.maxConnections) refuseOnce(socket, cap.refuse);
  });
}

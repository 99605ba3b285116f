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

const REFUSED = Symbol('servicepay.refusedOverAddressCap');

/**
 * Whether `socket` was refused by `capConnectionsPerAddress`: a request the peer had already sent on it may
 * still be parsed before the socket is gone, and a handler that would do work for it can return at once.
 *
 * @example
 * if (refusedOverAddressCap(req.socket)) return;
 */
export function refusedOverAddressCap(socket: Socket): boolean {
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
    socket[REFUSED] = true;
    // Closed for good once the answer is out, without waiting for the peer to close its side.
    socket.once('finish', () => socket.destroy());
    cap.refuse(socket);
  });
}

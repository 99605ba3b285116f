/**
 * A flood of idle connections from one address, run as a process of its own (the server under test keeps its
 * event loop): `sockets` connections to `host:port` from `localAddress`, each sending one byte (the start of a
 * request that never ends) and, once the server closes it, connecting again `reconnectMs` later. Every 200 ms
 * it prints one JSON line of counts:
 * - `attempts`: connections started; `established`: connected now; `waiting`: connected and answered nothing;
 * - `peakWaiting`: the most ever waiting at once (held by the server, or not accepted yet);
 * - `refused503`: connections the server answered 503 and closed; `timedOut408`: answered 408 (header timeout).
 *
 * @example
 * node --import tsx test/support/connection-flood.ts 127.0.0.1 4242 127.0.0.1 4300 1000
 */
import { connect } from 'node:net';

const [host = '127.0.0.1', port = '0', localAddress = '127.0.0.1', sockets = '100', reconnectMs = '1000'] =
  process.argv.slice(2);

const counts = { attempts: 0, established: 0, waiting: 0, peakWaiting: 0, refused503: 0, timedOut408: 0 };

function open(): void {
  counts.attempts += 1;
  const socket = connect({ host, port: Number(port), localAddress });
  let connected = false;
  let answered = false;
  socket.on('connect', () => {
    connected = true;
    counts.established += 1;
    counts.waiting += 1;
    counts.peakWaiting = Math.max(counts.peakWaiting, counts.waiting);
    socket.write('G');
  });
  socket.on('data', (chunk: Buffer) => {
    if (answered) return;
    answered = true;
    counts.waiting -= 1;
    const status = chunk.toString('latin1', 9, 12);
    if (status === '503') counts.refused503 += 1;
    else if (status === '408') counts.timedOut408 += 1;
  });
  socket.on('error', () => {});
  socket.on('close', () => {
    if (connected) {
      counts.established -= 1;
      if (!answered) counts.waiting -= 1;
    }
    setTimeout(open, Number(reconnectMs));
  });
}

for (let i = 0; i < Number(sockets); i++) open();
setInterval(() => process.stdout.write(`${JSON.stringify(counts)}\n`), 200);

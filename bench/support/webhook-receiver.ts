/**
 * The receiver of bench/webhook-throughput.ts, in its own process: answers 200 to every POST, counts posts and
 * distinct event ids, and reports them over IPC on `{ type: 'count' }`.
 */
import { once } from 'node:events';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

const ids = new Set<string>();
let posts = 0;
const server = createServer((req, res) => {
  req.resume();
  req.on('end', () => {
    posts += 1;
    const id = req.headers['x-service-event-id'];
    if (typeof id === 'string') ids.add(id);
    res.end('ok');
  });
});
server.keepAliveTimeout = 30_000;
server.listen(0, '127.0.0.1');
await once(server, 'listening');
process.on('message', (message: { type: string }) => {
  if (message.type === 'count') process.send?.({ type: 'count', posts, distinct: ids.size });
  if (message.type === 'reset') {
    ids.clear();
    posts = 0;
    process.send?.({ type: 'reset' });
  }
  if (message.type === 'stop') process.exit(0);
});
process.send?.({ type: 'ready', url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks` });

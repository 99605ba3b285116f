/**
 * The idle push streams of bench/push-latency.ts, held in their own process (neither the server's nor the
 * one that sends notifications and times them). Each stream is a bare TCP socket with a hand-written
 * `GET …/events`, so that thousands cost this process little. Answers over IPC (see push-ipc.ts):
 * - `open { host, port, sessions }` → opens one stream per session, answers once each has its first message;
 * - `window-start` / `window-stop` → from start to stop: this process's event-loop lag, the heartbeats its
 *   streams received, and the longest silence any of them had (what a client's dead-stream timer sees);
 * - `close` → ends every stream.
 */
import { connect, type Socket } from 'node:net';
import { answerParent, lagMonitor } from './push-ipc.ts';

type Target = { sessionId: string; token: string };

const sockets: Socket[] = [];
/** When each stream last received bytes (ms, performance.now()). */
const lastAt: number[] = [];
let heartbeats = 0;
let longestSilence = 0;
let measuring = false;
const lag = lagMonitor();

function openOne(host: string, port: number, target: Target): Promise<void> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host, port, noDelay: true });
    const index = sockets.push(socket) - 1;
    lastAt[index] = performance.now();
    let head = '';
    let opened = false;
    socket.setEncoding('latin1');
    socket.on('connect', () => {
      socket.write(
        `GET /api/widget/sessions/${target.sessionId}/events HTTP/1.1\r\nHost: ${host}:${port}\r\n` +
          `Authorization: Bearer ${target.token}\r\nAccept: text/event-stream\r\n\r\n`,
      );
    });
    socket.on('data', (chunk: string) => {
      const now = performance.now();
      if (!opened) {
        head += chunk;
        if (!head.startsWith('HTTP/1.1 200')) {
          if (head.includes('\r\n')) reject(new Error(`stream answered ${head.split('\r\n')[0]}`));
          return;
        }
        if (!head.includes('\n\n', head.indexOf('data: '))) return;
        opened = true;
        head = '';
        lastAt[index] = now;
        resolve();
        return;
      }
      if (measuring) {
        longestSilence = Math.max(longestSilence, now - (lastAt[index] ?? now));
        if (chunk.includes(': heartbeat')) heartbeats += 1;
      }
      lastAt[index] = now;
    });
    socket.on('error', reject);
  });
}

answerParent(async (message) => {
  switch (message.type) {
    case 'open': {
      const host = String(message.host);
      const port = Number(message.port);
      const targets = message.sessions as Target[];
      for (let i = 0; i < targets.length; i += 250) {
        await Promise.all(targets.slice(i, i + 250).map((target) => openOne(host, port, target)));
      }
      return { open: sockets.length };
    }
    case 'window-start': {
      const now = performance.now();
      for (let i = 0; i < lastAt.length; i++) lastAt[i] = now;
      heartbeats = 0;
      longestSilence = 0;
      measuring = true;
      lag.start();
      return {};
    }
    case 'window-stop': {
      measuring = false;
      const now = performance.now();
      // A stream still silent at the end counts too: its silence so far.
      for (const at of lastAt) longestSilence = Math.max(longestSilence, now - at);
      return { lag: lag.stop(), heartbeats, longestSilence, open: sockets.length };
    }
    case 'close': {
      for (const socket of sockets.splice(0)) socket.destroy();
      lastAt.length = 0;
      return {};
    }
    case 'stop': {
      for (const socket of sockets.splice(0)) socket.destroy();
      setImmediate(() => process.exit(0));
      return {};
    }
    default:
      return { error: `unknown request ${message.type}` };
  }
});

process.send?.({ type: 'ready' });

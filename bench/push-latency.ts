/**
 * Push latency and memory per open stream.
 *
 *   node --import tsx bench/push-latency.ts [--streams 1000,10000] [--samples 200]
 *
 * The server runs in a child process (its memory measured alone, after a full GC); this process holds the SSE
 * clients. For each sample, a signed bank notification for one watched session is posted, and the time from the
 * notification's HTTP response to the `successful` message at that session's stream is recorded (the push is
 * written before the response, so it often arrives first: those samples count as 0 and are reported). Also
 * shown: from sending the notification to the message. Baseline: the same with a single open stream.
 */
import { fork } from 'node:child_process';
import { Agent, request } from 'node:http';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import type { BankNotification } from '@servicepay/node/protocol';
import { newId } from '../reference-server/src/internal/random.ts';
import { signPayload } from '../reference-server/src/internal/signature.ts';

const { values } = parseArgs({
  options: {
    streams: { type: 'string', default: '1000,10000' },
    samples: { type: 'string', default: '200' },
  },
});
const levels = [1, ...String(values.streams).split(',').map(Number)];
const samples = Number(values.samples);

type Session = { sessionId: string; token: string; accountNumber: string; amount: number };
type Reply = { type: string; [key: string]: unknown };

const child = fork(fileURLToPath(new URL('./support/push-server.ts', import.meta.url)), [], {
  execArgv: ['--import', 'tsx', '--expose-gc'],
  stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
});
const replies: Reply[] = [];
const waiting: Array<(reply: Reply) => void> = [];
child.on('message', (message: Reply) => {
  const waiter = waiting.shift();
  if (waiter) waiter(message);
  else replies.push(message);
});
const next = () =>
  new Promise<Reply>((resolve) => {
    const queued = replies.shift();
    if (queued) resolve(queued);
    else waiting.push(resolve);
  });
const ask = async (message: object) => {
  child.send(message);
  return next();
};

const ready = await next();
const base = new URL(String(ready.url));
const bankSecret = String(ready.bankSecret);
const agent = new Agent({ keepAlive: true, maxSockets: Number.POSITIVE_INFINITY });

/** Opens one stream; resolves on its first message; `onStatus` gets every later status. */
function openStream(session: Session, onStatus: (status: string) => void): Promise<() => void> {
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: base.hostname,
        port: base.port,
        path: `/api/widget/sessions/${session.sessionId}/events`,
        headers: { authorization: `Bearer ${session.token}`, accept: 'text/event-stream' },
        agent: false,
      },
      (res) => {
        if (res.statusCode !== 200) return reject(new Error(`stream answered ${res.statusCode}`));
        res.setEncoding('utf8');
        let first = true;
        let buffer = '';
        res.on('data', (chunk: string) => {
          buffer += chunk;
          let end = buffer.indexOf('\n\n');
          while (end !== -1) {
            const frame = buffer.slice(0, end);
            buffer = buffer.slice(end + 2);
            const data = /^data: (.*)$/m.exec(frame)?.[1];
            if (data) {
              const status = (JSON.parse(data) as { status: string }).status;
              if (first) {
                first = false;
                resolve(() => req.destroy());
              } else onStatus(status);
            }
            end = buffer.indexOf('\n\n');
          }
        });
        res.on('error', () => undefined);
      },
    );
    req.on('error', reject);
    req.end();
  });
}

function notify(session: Session): Promise<void> {
  const body: BankNotification = {
    id: newId('ntf'),
    type: 'transfer.received',
    occurredAt: new Date().toISOString(),
    transfer: {
      id: newId('trf'),
      accountNumber: session.accountNumber,
      amount: session.amount,
      currency: 'NGN',
      outcome: 'credited',
      returnReason: null,
    },
  };
  const raw = JSON.stringify(body);
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: base.hostname,
        port: base.port,
        path: '/bank/notifications',
        method: 'POST',
        agent,
        headers: {
          'content-type': 'application/json',
          'content-length': Buffer.byteLength(raw),
          'x-bank-signature': signPayload(raw, [bankSecret], Math.floor(Date.now() / 1000)),
        },
      },
      (res) => {
        res.resume();
        res.on('end', () =>
          res.statusCode === 200 ? resolve() : reject(new Error(`bank ${res.statusCode}`)),
        );
      },
    );
    req.on('error', reject);
    req.end(raw);
  });
}

const percentile = (sorted: number[], p: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? Number.NaN;

type Row = {
  streams: number;
  p50: number;
  p99: number;
  max: number;
  pushFirst: number;
  sendP50: number;
  sendP99: number;
  heapPerStream: number | null;
  rssPerStream: number | null;
};
const rows: Row[] = [];
const started = Date.now();

for (const level of levels) {
  const total = level + samples;
  const { sessions } = (await ask({ type: 'sessions', count: total })) as unknown as { sessions: Session[] };
  const before = (await ask({ type: 'memory' })) as unknown as { heapUsed: number; rss: number };
  const arrivals = new Map<string, (status: string) => void>();
  const closers: Array<() => void> = [];
  for (let i = 0; i < sessions.length; i += 500) {
    const batch = sessions.slice(i, i + 500);
    closers.push(
      ...(await Promise.all(
        batch.map((session) => openStream(session, (status) => arrivals.get(session.sessionId)?.(status))),
      )),
    );
  }
  const after = (await ask({ type: 'memory' })) as unknown as { heapUsed: number; rss: number };
  const open = sessions.length;

  const fromResponse: number[] = [];
  const fromSend: number[] = [];
  let pushFirst = 0;
  for (const session of sessions.slice(level)) {
    const arrived = new Promise<number>((resolve) => {
      arrivals.set(session.sessionId, (status) => {
        if (status === 'successful') resolve(performance.now());
      });
    });
    const sent = performance.now();
    await notify(session);
    const answered = performance.now();
    const at = await arrived;
    if (at < answered) pushFirst += 1;
    fromResponse.push(Math.max(0, at - answered));
    fromSend.push(at - sent);
  }
  fromResponse.sort((a, b) => a - b);
  fromSend.sort((a, b) => a - b);
  rows.push({
    streams: open,
    p50: percentile(fromResponse, 50),
    p99: percentile(fromResponse, 99),
    max: fromResponse.at(-1) ?? Number.NaN,
    pushFirst,
    sendP50: percentile(fromSend, 50),
    sendP99: percentile(fromSend, 99),
    heapPerStream: level > 1 ? (after.heapUsed - before.heapUsed) / open : null,
    rssPerStream: level > 1 ? (after.rss - before.rss) / open : null,
  });
  for (const close of closers) close();
  await new Promise((resolve) => setTimeout(resolve, 500));
}

const ms = (value: number) => `${value.toFixed(2)} ms`;
const kb = (value: number | null) => (value === null ? '—' : `${(value / 1024).toFixed(1)} KB`);
console.log(`\nPush latency (bank notification HTTP response → SSE message), ${samples} samples per row`);
console.log(
  '| open streams | p50 | p99 | max | push before response | p50 from send | p99 from send | server heap/stream | server RSS/stream |',
);
console.log('|---|---|---|---|---|---|---|---|---|');
for (const row of rows) {
  console.log(
    `| ${row.streams}${row.streams === 1 + samples ? ' (baseline)' : ''} | ${ms(row.p50)} | ${ms(row.p99)} | ${ms(row.max)} | ${row.pushFirst}/${samples} | ${ms(row.sendP50)} | ${ms(row.sendP99)} | ${kb(row.heapPerStream)} | ${kb(row.rssPerStream)} |`,
  );
}
console.log('Targets: p99 ≤ 10 ms with 10,000 open streams; ≤ 16 KB of server memory per open stream.');
console.log(
  `(${((Date.now() - started) / 1000).toFixed(1)} s; open streams include the ${samples} sampled ones)`,
);
child.send({ type: 'stop' });
agent.destroy();

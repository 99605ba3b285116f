import type { Agent, ClientRequest, IncomingMessage } from 'node:http';
import { request } from 'node:http';
import type { BankNotification } from '@servicepay/node/protocol';
import { newId } from '../../reference-server/src/internal/random.ts';
import { signPayload } from '../../reference-server/src/internal/signature.ts';

// push-latency.ts's sender and watcher: it pays sessions whose streams it watches, and times each payment from
// just before the notification's bytes are written to the `successful` message on that session's stream.

/** A session made for the bench, with the widget token its stream opens with and the account to pay. */
export type Session = { sessionId: string; token: string; accountNumber: string; amount: number };

/** The server under test, and how often to pay (a second, on average). */
export interface PushTarget {
  base: URL;
  bankSecret: string;
  /** Keep-alive agent for the notifications (the streams each take their own socket). */
  agent: Agent;
  rate: number;
}

/** Milliseconds on the one monotonic clock both ends of a sample are read from. */
export const clock = (): number => Number(process.hrtime.bigint()) / 1e6;

/** One sampled session: its stream, and the times of its sample. */
type Watched = {
  session: Session;
  request: ClientRequest;
  sentAt?: number;
  answeredAt?: number;
  arrived: (at: number) => void;
};

/** Opens a stream this process watches; resolves once its first message (the current state) is in. */
function watch(target: PushTarget, session: Session): Promise<Watched> {
  const { base } = target;
  return new Promise((resolve, reject) => {
    let first = true;
    const watched: Watched = {
      session,
      request: request({
        host: base.hostname,
        port: base.port,
        path: `/api/widget/sessions/${session.sessionId}/events`,
        headers: { authorization: `Bearer ${session.token}`, accept: 'text/event-stream' },
        agent: false,
      }),
      arrived: () => undefined,
    };
    watched.request.on('response', (res: IncomingMessage) => {
      if (res.statusCode !== 200) return reject(new Error(`stream answered ${res.statusCode}`));
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        const at = clock();
        if (first && chunk.includes('data: ')) {
          first = false;
          resolve(watched);
        } else if (chunk.includes('"status":"successful"')) {
          watched.arrived(at);
        }
      });
      res.on('error', () => undefined);
    });
    watched.request.on('error', reject);
    watched.request.setNoDelay(true);
    watched.request.end();
  });
}

function notification(session: Session): string {
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
  return JSON.stringify(body);
}

/** Posts the signed notification; `sentAt` is read just before its bytes are handed to the socket. */
function notify(target: PushTarget, watched: Watched): Promise<void> {
  const { base, agent } = target;
  const raw = notification(watched.session);
  const signature = signPayload(raw, [target.bankSecret], Math.floor(Date.now() / 1000));
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
          'x-bank-signature': signature,
        },
      },
      (res) => {
        res.resume();
        res.on('end', () => {
          watched.answeredAt = clock();
          if (res.statusCode === 200) resolve();
          else reject(new Error(`bank answered ${res.statusCode}`));
        });
      },
    );
    req.on('error', reject);
    watched.sentAt = clock();
    req.end(raw);
  });
}

export type Sampled = { latencies: number[]; answered: number[]; waitedForPool: number };

/**
 * Keeps `pool` watched streams open on sessions it will pay, and pays one of them at Poisson-distributed
 * times. A paid stream is closed by the server after `successful`; the next session's stream opens in its place.
 *
 * @example
 * const sampler = new Sampler({ base, bankSecret, agent, rate: 50 }, sessions, 32);
 * await sampler.fill();
 * const { latencies } = await sampler.run(60_000);
 * sampler.close();
 */
export class Sampler {
  private readonly queue: Session[];
  private readonly ready: Watched[] = [];
  private readonly readyWaiters: Array<() => void> = [];

  constructor(
    private readonly target: PushTarget,
    sessions: Session[],
    private readonly pool: number,
  ) {
    this.queue = [...sessions];
  }

  /** Opens the pool; resolves once every stream of it has its first message. */
  async fill(): Promise<void> {
    const opening: Promise<void>[] = [];
    for (let i = 0; i < this.pool; i++) opening.push(this.refill());
    await Promise.all(opening);
  }

  private async refill(): Promise<void> {
    const next = this.queue.shift();
    if (!next) return;
    this.ready.push(await watch(this.target, next));
    this.readyWaiters.shift()?.();
  }

  async run(ms: number): Promise<Sampled> {
    const pending: Promise<void>[] = [];
    const latencies: number[] = [];
    const answered: number[] = [];
    let waitedForPool = 0;
    const end = clock() + ms;
    let due = clock();
    while (true) {
      due += -Math.log(1 - Math.random()) * (1000 / this.target.rate);
      if (due >= end) break;
      const wait = due - clock();
      if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
      let watched = this.ready.shift();
      if (!watched) {
        if (this.queue.length === 0) throw new Error('ran out of sessions to pay: raise perRow()');
        waitedForPool += 1;
        await new Promise<void>((resolve) => this.readyWaiters.push(resolve));
        watched = this.ready.shift();
        if (!watched) throw new Error('no stream to pay');
      }
      const current = watched;
      const arrived = new Promise<number>((resolve) => {
        current.arrived = resolve;
      });
      pending.push(
        Promise.all([notify(this.target, current), arrived]).then(([, at]) => {
          latencies.push(at - (current.sentAt ?? at));
          answered.push((current.answeredAt ?? at) - (current.sentAt ?? at));
          current.request.destroy();
          void this.refill();
        }),
      );
    }
    await Promise.all(pending);
    return { latencies, answered, waitedForPool };
  }

  close(): void {
    for (const watched of this.ready.splice(0)) watched.request.destroy();
  }
}

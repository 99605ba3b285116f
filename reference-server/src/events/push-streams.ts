import type { ServerResponse } from 'node:http';
import type { Session, StatusMessage, StatusReason } from '@servicepay/node/protocol';
import type { Store } from '../db/store.ts';
import { isTerminal } from '../sessions/session-lifecycle.ts';
import { toSessionView, toStatusMessage } from '../sessions/session-views.ts';
import type { Broadcaster, SessionUpdate } from './broadcaster.ts';

/** The per-stream state, kept on the response itself so an open stream costs no extra objects or closures. */
const LAST_SEQ = Symbol('servicepay.lastSeq');
const SESSION_ID = Symbol('servicepay.sessionId');
const HUB = Symbol('servicepay.hub');
const OWNER = Symbol('servicepay.owner');

/** Who opened a stream, for the caps: the widget token (by its hash) and the client address. */
export interface StreamOwner {
  token: string;
  address: string;
}

type Stream = ServerResponse & {
  [LAST_SEQ]: number;
  [SESSION_ID]: string;
  [HUB]: PushStreams;
  [OWNER]: StreamOwner | undefined;
};

type Watched = { streams: Set<Stream>; unsubscribe: () => void };

export interface PushStreamsOptions {
  /** How often every open stream gets a comment line, so proxies and the browser keep it open. */
  heartbeatMs?: number;
  /** Open streams one widget token may hold at once (a checkout needs one; reconnects overlap briefly). */
  maxPerToken?: number;
  /** Open streams one client address may hold at once, across tokens. */
  maxPerAddress?: number;
}

/** Which cap a new stream would break, if any. */
export type StreamCap = 'token' | 'address';

/** One SSE frame: `id:`, `event: status`, `data:` (one line of JSON), blank line. */
export const statusFrame = (seq: number, message: StatusMessage): string =>
  `id: ${seq}\nevent: status\ndata: ${JSON.stringify(message)}\n\n`;

export const HEARTBEAT_FRAME = ': heartbeat\n\n';

function onStreamClose(this: Stream): void {
  this[HUB].detach(this);
}

/**
 * The open push streams of this process (`GET /api/widget/sessions/{id}/events`). It listens to the broadcaster
 * once per watched session (with one shared listener), writes each transition to that session's streams, ends
 * them after a terminal status, and sends heartbeats to all streams from one shared timer. It is a background
 * task of the service: `start` runs the heartbeat, `stop` ends every stream.
 *
 * @example
 * const streams = new PushStreams(store, broadcaster, { heartbeatMs: 15_000 });
 * streams.start();
 * if (streams.capExceeded(owner) === null) streams.open(res, sessionId, lastEventId, owner); // after the token check
 */
export class PushStreams {
  private readonly watched = new Map<string, Watched>();
  private timer: NodeJS.Timeout | undefined;
  private openCount = 0;
  private readonly heartbeatMs: number;
  private readonly maxPerToken: number;
  private readonly maxPerAddress: number;
  private readonly perToken = new Map<string, number>();
  private readonly perAddress = new Map<string, number>();

  constructor(
    private readonly store: Store,
    private readonly broadcaster: Broadcaster,
    options: PushStreamsOptions = {},
  ) {
    this.heartbeatMs = options.heartbeatMs ?? 15_000;
    this.maxPerToken = options.maxPerToken ?? 10;
    this.maxPerAddress = options.maxPerAddress ?? 100;
  }

  /**
   * Whether `owner` may open one more stream: null if so, else the cap it would break. A route checks this and
   * opens in the same synchronous step, so two requests cannot both take the last place.
   */
  capExceeded(owner: StreamOwner): StreamCap | null {
    if ((this.perToken.get(owner.token) ?? 0) >= this.maxPerToken) return 'token';
    if ((this.perAddress.get(owner.address) ?? 0) >= this.maxPerAddress) return 'address';
    return null;
  }

  /** The limits, for the answer that refuses a stream. */
  get caps(): { perToken: number; perAddress: number } {
    return { perToken: this.maxPerToken, perAddress: this.maxPerAddress };
  }

  start(): void {
    this.timer = setInterval(() => this.heartbeat(), this.heartbeatMs);
    this.timer.unref();
  }

  stop(): void {
    clearInterval(this.timer);
    this.timer = undefined;
    for (const { streams } of [...this.watched.values()]) {
      for (const stream of [...streams]) stream.end();
    }
  }

  /** Open streams in this process. */
  get size(): number {
    return this.openCount;
  }

  /** Writes a heartbeat comment to every open stream (the shared timer calls this; tests may too). */
  heartbeat(): void {
    for (const { streams } of this.watched.values()) {
      for (const stream of streams) stream.write(HEARTBEAT_FRAME);
    }
  }

  /**
   * Starts a stream on `res`: the transitions after `lastEventId` if the client is resuming, then the current
   * state (always, so every connection begins with a message), then live transitions until a terminal one.
   * Everything up to the subscription runs synchronously, so no transition can fall between the replay and
   * the live feed (commits and their publishes happen in one synchronous step of the write queue).
   */
  open(res: ServerResponse, sessionId: string, lastEventId: number | undefined, owner?: StreamOwner): void {
    const session = this.store.sessions.find(sessionId);
    if (!session) {
      res.end();
      return;
    }
    res.writeHead(200, {
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-store, no-transform',
      connection: 'keep-alive',
      'x-accel-buffering': 'no',
    });
    const merchantName = this.store.businesses.find(session.businessId)?.name ?? '';
    const last = this.store.events.lastForSession(sessionId);
    const currentSeq = last?.seq ?? 0;
    let out = '';
    if (lastEventId !== undefined && lastEventId < currentSeq) {
      for (const event of this.store.events.forSessionAfter(sessionId, lastEventId)) {
        if (event.seq >= currentSeq) break;
        const then = JSON.parse(event.payload) as Session;
        out += statusFrame(
          event.seq,
          toStatusMessage(then, merchantName, event.reason as StatusReason | null),
        );
      }
    }
    const account =
      session.accountNumber === null ? undefined : this.store.virtualAccounts.find(session.accountNumber);
    const reason = (last?.reason ?? null) as StatusReason | null;
    out += statusFrame(currentSeq, toStatusMessage(toSessionView(session, account), merchantName, reason));
    if (isTerminal(session.status)) {
      res.end(out);
      return;
    }
    res.write(out);

    const stream = res as Stream;
    stream[LAST_SEQ] = currentSeq;
    stream[SESSION_ID] = sessionId;
    stream[HUB] = this;
    stream[OWNER] = owner;
    if (owner) {
      this.perToken.set(owner.token, (this.perToken.get(owner.token) ?? 0) + 1);
      this.perAddress.set(owner.address, (this.perAddress.get(owner.address) ?? 0) + 1);
    }
    let entry = this.watched.get(sessionId);
    if (!entry) {
      entry = { streams: new Set(), unsubscribe: () => undefined };
      this.watched.set(sessionId, entry);
      entry.unsubscribe = this.broadcaster.subscribe(sessionId, this.deliver);
    }
    entry.streams.add(stream);
    this.openCount += 1;
    stream.once('close', onStreamClose);
  }

  /** Forgets a stream (client gone, or ended after a terminal status). */
  detach(stream: Stream): void {
    const entry = this.watched.get(stream[SESSION_ID]);
    if (!entry?.streams.delete(stream)) return;
    this.openCount -= 1;
    const owner = stream[OWNER];
    if (owner) {
      release(this.perToken, owner.token);
      release(this.perAddress, owner.address);
    }
    if (entry.streams.size === 0) {
      this.watched.delete(stream[SESSION_ID]);
      entry.unsubscribe();
    }
  }

  /** The one listener for every watched session. */
  private readonly deliver = (update: SessionUpdate): void => {
    const entry = this.watched.get(update.sessionId);
    if (!entry) return;
    const frame = statusFrame(update.seq, update.message);
    const terminal = isTerminal(update.message.status);
    for (const stream of [...entry.streams]) {
      if (update.seq <= stream[LAST_SEQ]) continue;
      stream[LAST_SEQ] = update.seq;
      if (terminal) {
        this.detach(stream);
        stream.end(frame);
      } else {
        stream.write(frame);
      }
    }
  };
}

/** One fewer under `key`; the entry goes when it reaches zero, so the maps follow open streams only. */
function release(counts: Map<string, number>, key: string): void {
  const left = (counts.get(key) ?? 1) - 1;
  if (left <= 0) counts.delete(key);
  else counts.set(key, left);
}

import type { ServerResponse } from 'node:http';
import {
  PUSH_RETRY_MS,
  type Session,
  type StatusMessage,
  type StatusReason,
} from '@servicepay/node/protocol';
import type { Broadcaster, SessionUpdate } from '../db/broadcaster.ts';
import type { Store } from '../db/store.ts';
import { pushStreamOpened, pushWritten } from '../metrics/metrics.ts';
import { isTerminal } from '../views/session-status.ts';
import { toSessionView, toStatusMessage } from '../views/session-views.ts';

/** Who opened a stream, for the caps: the widget token (by its hash) and the client address. */
export interface StreamOwner {
  token: string;
  address: string;
}

/** Everything an open stream needs, in one small object on the response (no per-stream closure or timer). */
interface StreamState {
  hub: PushStreams;
  sessionId: string;
  /** The owner's token hash and address (not the owner object: one object fewer per stream); '' when none. */
  token: string;
  address: string;
  /** The seq of the last status written; a live update at or below it was already sent. */
  lastSeq: number;
  /** Updates that came in while the replay was read and written (sent after it, by seq); undefined once live. */
  held: SessionUpdate[] | undefined;
  /** Heartbeat bucket and place in it; -1 when in none. */
  bucket: number;
  slot: number;
}

const STATE = Symbol('servicepay.pushStream');

type Stream = ServerResponse & { [STATE]: StreamState };

/** The streams of one watched session (nearly always one) and how to stop listening for it. */
type Watched = { streams: Stream[]; unsubscribe: () => void };

export interface PushStreamsOptions {
  /**
   * The longest a stream goes without a byte (proxies and browsers drop silent connections). The wheel turns
   * in 97% of it, so that an event loop running up to 3% late (450 ms of 15 s) still keeps the promise.
   */
  heartbeatMs?: number;
  /**
   * Into how many slices the heartbeat interval is cut: streams are spread over this many buckets, and one
   * timer writes one bucket per `heartbeatMs / heartbeatSlices`, so no turn of the event loop writes to all.
   * Default: a slice every 25 ms (600 for 15 s), so that at 10k streams a sweep writes to ~17 of them (a write
   * to a socket costs 5-100 µs of this thread, more when the machine is busy).
   */
  heartbeatSlices?: number;
  /**
   * Open streams one widget token may hold at once (a checkout needs one; reconnects overlap briefly). Counted
   * by this process for the streams it holds, so N instances allow N times as many (docs/production.md,
   * "Limits that are not done yet").
   */
  maxPerToken?: number;
  /** Open streams one client address may hold at once, across tokens; per process like `maxPerToken`. */
  maxPerAddress?: number;
}

/** Which cap a new stream would break, if any. */
export type StreamCap = 'token' | 'address';

/**
 * One SSE frame: `id:`, `event: status`, `data:` (one line of JSON), blank line.
 *
 * @example
 * res.write(statusFrame(update.seq, update.message));
 */
export const statusFrame = (seq: number, message: StatusMessage): string =>
  `id: ${seq}\nevent: status\ndata: ${JSON.stringify(message)}\n\n`;

/**
 * What every stream opens with, before its first message: the `retry:` field, so a client that loses the
 * stream reconnects after the service's interval (`PUSH_RETRY_MS`) rather than its own default.
 *
 * @example
 * res.write(RETRY_FRAME + statusFrame(update.seq, update.message));
 */
export const RETRY_FRAME = `retry: ${PUSH_RETRY_MS}\n\n`;

/**
 * The comment line a stream gets when it has been quiet for a heartbeat interval; SSE clients ignore it.
 *
 * @example
 * res.write(HEARTBEAT_FRAME);
 */
export const HEARTBEAT_FRAME = ': heartbeat\n\n';

/**
 * The head of a push stream (a `HEAD` on the route answers the same): no caching or transforming by proxies,
 * no buffering by nginx (`x-accel-buffering`).
 *
 * @example
 * res.writeHead(200, STREAM_HEADERS);
 */
export const STREAM_HEADERS = {
  'content-type': 'text/event-stream; charset=utf-8',
  'cache-control': 'no-store, no-transform',
  connection: 'keep-alive',
  'x-accel-buffering': 'no',
};

function onStreamClose(this: Stream): void {
  this[STATE].hub.detach(this);
}

/** What a new stream starts with: its frames, the seq of the last, and whether that status ends the stream. */
type Replay = { frames: string; seq: number; terminal: boolean };

/**
 * The open push streams of this process (`GET /api/widget/sessions/{id}/events`). It listens to the broadcaster
 * once per watched session (with one shared listener), writes each transition to that session's streams, ends
 * them after a terminal status, and sends heartbeats from one shared timer that writes one slice of the streams
 * at a time. It is a background task of the service: `start` runs the heartbeat, `stop` ends every stream.
 *
 * A stream subscribes before it reads the events table, and drops by `seq` what it already sent, so that a
 * transition committed while it opens is sent once: it is either in what the stream read, or delivered to it
 * afterwards (held until the replay is written), or both (then sent once). This holds whether the broadcaster
 * publishes in the committing step (in-process) or later and from elsewhere (another instance).
 *
 * @example
 * const streams = new PushStreams(store, broadcaster, { heartbeatMs: 15_000 });
 * streams.start();
 * if (streams.capExceeded(owner) === null) await streams.open(res, sessionId, lastEventId, owner); // after the token check
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
  /** Heartbeat buckets: bucket `i` is written at the `i`-th slice of every interval. */
  private readonly buckets: Stream[][];
  /** The bucket the next sweep writes. */
  private sweepAt = 0;
  /** Slices swept since `start`, to catch up with the clock rather than drift behind it. */
  private swept = 0;
  private startedAt = 0;

  constructor(
    private readonly store: Store,
    private readonly broadcaster: Broadcaster,
    options: PushStreamsOptions = {},
  ) {
    this.heartbeatMs = options.heartbeatMs ?? 15_000;
    this.maxPerToken = options.maxPerToken ?? 10;
    this.maxPerAddress = options.maxPerAddress ?? 100;
    const slices = Math.max(1, Math.floor(options.heartbeatSlices ?? this.heartbeatMs / 25));
    this.buckets = Array.from({ length: slices }, () => []);
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
    const sliceMs = (this.heartbeatMs * 0.97) / this.buckets.length;
    this.startedAt = performance.now();
    this.swept = 0;
    this.timer = setInterval(() => {
      // Sweep every slice that fell due (timers fire late, never early): each bucket is written once per turn
      // of the wheel by the clock, not once per `slices` firings, so lateness does not add up.
      const due = Math.floor((performance.now() - this.startedAt) / sliceMs);
      for (let n = 0; this.swept < due && n < this.buckets.length; n++, this.swept++) this.sweep();
      this.swept = due;
    }, Math.ceil(sliceMs)); // never before the slice is due
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

  /** How many streams each heartbeat bucket holds, in sweep order from bucket 0 (for tests and metrics). */
  get heartbeatBuckets(): number[] {
    return this.buckets.map((bucket) => bucket.length);
  }

  /** Writes a heartbeat to the streams of the next bucket (the shared timer calls this; tests may too). */
  sweep(): void {
    const bucket = this.buckets[this.sweepAt] ?? [];
    this.sweepAt = (this.sweepAt + 1) % this.buckets.length;
    for (const stream of bucket) stream.write(HEARTBEAT_FRAME);
  }

  /** Writes a heartbeat to every open stream at once (for tests; the timer spreads them with `sweep`). */
  heartbeat(): void {
    for (const bucket of this.buckets) {
      for (const stream of bucket) stream.write(HEARTBEAT_FRAME);
    }
  }

  /**
   * Starts a stream on `res`: the transitions after `lastEventId` if the client is resuming, the last of them
   * being the current state (or the current state alone), then live transitions until a terminal one.
   * It subscribes first, then reads the events table: see the class comment.
   */
  async open(
    res: ServerResponse,
    sessionId: string,
    lastEventId: number | undefined,
    owner?: StreamOwner,
  ): Promise<void> {
    const stream = res as Stream;
    const state: StreamState = {
      hub: this,
      sessionId,
      token: owner?.token ?? '',
      address: owner?.address ?? '',
      lastSeq: -1,
      held: [],
      bucket: -1,
      slot: -1,
    };
    stream[STATE] = state;
    this.attach(stream);
    pushStreamOpened();
    stream.once('close', onStreamClose);

    let replay: Replay | undefined;
    try {
      replay = await this.replay(sessionId, lastEventId);
    } catch (error) {
      this.detach(stream);
      throw error;
    }
    // The client left while the events were read: `close` already detached it.
    if (res.destroyed) return;
    if (!replay) {
      this.detach(stream);
      res.end();
      return;
    }
    let { frames, seq, terminal } = replay;
    const held = state.held ?? [];
    state.held = undefined;
    held.sort((a, b) => a.seq - b.seq);
    for (const update of held) {
      if (terminal) break;
      if (update.seq <= seq) continue;
      frames += statusFrame(update.seq, update.message);
      seq = update.seq;
      terminal = isTerminal(update.message.status);
    }
    state.lastSeq = seq;
    frames = RETRY_FRAME + frames;
    res.writeHead(200, STREAM_HEADERS);
    if (terminal) {
      this.detach(stream);
      res.end(frames);
      return;
    }
    res.write(frames);
    releaseSentHead(res);
    this.addToBucket(stream);
  }

  /** Forgets a stream (client gone, or ended after a terminal status). */
  detach(stream: Stream): void {
    const state = stream[STATE];
    const entry = this.watched.get(state.sessionId);
    const index = entry ? entry.streams.indexOf(stream) : -1;
    if (!entry || index === -1) return;
    entry.streams.splice(index, 1);
    this.removeFromBucket(stream);
    this.openCount -= 1;
    if (state.token !== '') release(this.perToken, state.token);
    if (state.address !== '') release(this.perAddress, state.address);
    if (entry.streams.length === 0) {
      this.watched.delete(state.sessionId);
      entry.unsubscribe();
    }
  }

  /** Counts the stream against its caps and listens for its session (the broadcaster once per session). */
  private attach(stream: Stream): void {
    const { sessionId, token, address } = stream[STATE];
    if (token !== '') this.perToken.set(token, (this.perToken.get(token) ?? 0) + 1);
    if (address !== '') this.perAddress.set(address, (this.perAddress.get(address) ?? 0) + 1);
    this.openCount += 1;
    const entry = this.watched.get(sessionId);
    if (entry) {
      entry.streams.push(stream);
      return;
    }
    const created: Watched = { streams: [stream], unsubscribe: noop };
    this.watched.set(sessionId, created);
    created.unsubscribe = this.broadcaster.subscribe(sessionId, this.deliver);
  }

  /**
   * The frames a new stream starts with, from the events table: with `lastEventId`, every event after it
   * (the last being the current state); else, or if none is after it, the last event. Each event holds the
   * session as it was after it, so the id and the state of every frame always agree. A session with no event
   * yet (seq 0) is read as it is. Undefined if the session does not exist.
   */
  private async replay(sessionId: string, lastEventId: number | undefined): Promise<Replay | undefined> {
    const { events: eventStore, sessions, virtualAccounts, businesses } = this.store;
    const events = lastEventId === undefined ? [] : await eventStore.forSessionAfter(sessionId, lastEventId);
    if (events.length === 0) {
      const last = await eventStore.lastForSession(sessionId);
      if (last) events.push(last);
    }
    const first = events[0];
    if (!first) {
      const session = await sessions.find(sessionId);
      if (!session) return undefined;
      const account =
        session.accountNumber === null ? undefined : await virtualAccounts.find(session.accountNumber);
      const merchantName = (await businesses.find(session.businessId))?.name ?? '';
      const message = toStatusMessage(toSessionView(session, account), merchantName, null);
      return { frames: statusFrame(0, message), seq: 0, terminal: isTerminal(session.status) };
    }
    const merchantName = (await businesses.find(first.businessId))?.name ?? '';
    let frames = '';
    let seq = 0;
    let terminal = false;
    for (const event of events) {
      const view = JSON.parse(event.payload) as Session;
      frames += statusFrame(
        event.seq,
        toStatusMessage(view, merchantName, event.reason as StatusReason | null),
      );
      seq = event.seq;
      terminal = isTerminal(view.status);
    }
    return { frames, seq, terminal };
  }

  /**
   * After the broadcaster says updates may have been missed (its listening connection to PostgreSQL was away:
   * nothing is kept for a connection that was not there), every watched session is read again from the
   * `events` table after the oldest seq its streams have sent, and what they lack is delivered as if it had
   * just arrived: each stream writes only what is above its own last seq, in order, once. Streams still
   * opening (`held`) read the table themselves.
   *
   * @example
   * new PostgresBroadcaster({ ..., onGap: () => void pushStreams.catchUp() });
   */
  async catchUp(): Promise<number> {
    let delivered = 0;
    for (const [sessionId, entry] of [...this.watched]) {
      const live = entry.streams.filter((stream) => !stream[STATE].held);
      if (live.length === 0) continue;
      const after = Math.min(...live.map((stream) => stream[STATE].lastSeq));
      const events = await this.store.events.forSessionAfter(sessionId, after);
      const first = events[0];
      if (!first) continue;
      const merchantName = (await this.store.businesses.find(first.businessId))?.name ?? '';
      for (const event of events) {
        const view = JSON.parse(event.payload) as Session;
        const message = toStatusMessage(view, merchantName, event.reason as StatusReason | null);
        this.deliver({ sessionId, seq: event.seq, message });
        delivered += 1;
      }
    }
    return delivered;
  }

  /** The one listener for every watched session. */
  private readonly deliver = (update: SessionUpdate): void => {
    const entry = this.watched.get(update.sessionId);
    if (!entry) return;
    let frame: string | undefined;
    const terminal = isTerminal(update.message.status);
    pushWritten(update.sessionId);
    for (const stream of terminal ? [...entry.streams] : entry.streams) {
      const state = stream[STATE];
      if (state.held) {
        state.held.push(update);
        continue;
      }
      if (update.seq <= state.lastSeq) continue;
      state.lastSeq = update.seq;
      frame ??= statusFrame(update.seq, update.message);
      if (terminal) {
        this.detach(stream);
        stream.end(frame);
      } else {
        stream.write(frame);
      }
    }
  };

  /**
   * A new stream (it has just had its first message) goes into the emptiest bucket of the half of the wheel
   * swept most recently, the latest swept on a tie: its first heartbeat comes between half an interval and a
   * whole one after it opened (a whole one when streams are few), and streams that open together, as after a
   * restart, still spread over half the buckets instead of piling into one.
   */
  private addToBucket(stream: Stream): void {
    const slices = this.buckets.length;
    let chosen: Stream[] | undefined;
    let index = -1;
    for (let back = 1; back <= Math.ceil(slices / 2); back++) {
      const at = (this.sweepAt - back + slices) % slices;
      const bucket = this.buckets[at];
      if (bucket && (!chosen || bucket.length < chosen.length)) {
        chosen = bucket;
        index = at;
        if (bucket.length === 0) break;
      }
    }
    if (!chosen) return;
    const state = stream[STATE];
    state.bucket = index;
    state.slot = chosen.push(stream) - 1;
  }

  /** Takes a stream out of its bucket in O(1): the bucket's last stream moves into its place. */
  private removeFromBucket(stream: Stream): void {
    const state = stream[STATE];
    const bucket = this.buckets[state.bucket];
    if (!bucket) return;
    const last = bucket.pop();
    if (last && last !== stream) {
      bucket[state.slot] = last;
      last[STATE].slot = state.slot;
    }
    state.bucket = -1;
    state.slot = -1;
  }
}

const noop = (): void => undefined;

/** Node's own name for the headers a response holds until they are sent (and, without this, after). */
let outHeaders: symbol | undefined | null = null;

/**
 * Lets go of the copies of the response head that Node keeps for the whole life of a response, once it is
 * sent (measured per open stream with heap snapshots, bench/support/push-heap.ts):
 * - the head as written, a string built by `+=`, one rope node per piece (about 1.5 KB): reading one
 *   character flattens it in place into one string of ~300 bytes;
 * - the header table behind `getHeader` (about 0.9 KB): nothing reads it once the head is out (`setHeader`
 *   throws from then on, and `getHeader` answers as for a response that set none). Found by its symbol's
 *   name; if a Node version names it otherwise, it is simply kept.
 */
function releaseSentHead(res: ServerResponse): void {
  if (!res.headersSent) return;
  const head = (res as ServerResponse & { _header?: unknown })._header;
  if (typeof head === 'string') head.charCodeAt(0);
  if (outHeaders === null) {
    outHeaders = Object.getOwnPropertySymbols(res).find((key) => key.description === 'kOutHeaders');
  }
  if (outHeaders !== undefined) (res as unknown as Record<symbol, unknown>)[outHeaders] = null;
}

/** One fewer under `key`; the entry goes when it reaches zero, so the maps follow open streams only. */
function release(counts: Map<string, number>, key: string): void {
  const left = (counts.get(key) ?? 1) - 1;
  if (left <= 0) counts.delete(key);
  else counts.set(key, left);
}

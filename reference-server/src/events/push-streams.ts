import type { ServerResponse } from 'node:http';
import type { Broadcaster, SessionUpdate } from '../db/broadcaster.ts';
import type { Store } from '../db/store.ts';
import { pushStreamOpened, pushWritten } from '../metrics/metrics.ts';
import { isTerminal } from '../views/session-status.ts';
import { HeartbeatWheel, type WheelPlace } from './heartbeat-wheel.ts';
import { HEARTBEAT_FRAME, statusFrame, writeOpening } from './sse-frames.ts';
import { readReplay, readUpdatesAfter } from './stream-replay.ts';

/** The head of a push stream, for the route that answers its `HEAD` (defined with the frames). */
export { STREAM_HEADERS } from './sse-frames.ts';

/** Who opened a stream, for the caps: the widget token (by its hash) and the client address. */
export interface StreamOwner {
  token: string;
  address: string;
}

/** Everything an open stream needs, in one small object on the response (no per-stream closure or timer). */
interface StreamState extends WheelPlace {
  hub: PushStreams;
  sessionId: string;
  /** The owner's token hash and address (not the owner object: one object fewer per stream); '' when none. */
  token: string;
  address: string;
  /** The seq of the last status written; a live update at or below it was already sent. */
  lastSeq: number;
  /** Updates that came in while the replay was read and written (sent after it, by seq); undefined once live. */
  held: SessionUpdate[] | undefined;
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

function onStreamClose(this: Stream): void {
  this[STATE].hub.detach(this);
}

const placeOf = (stream: Stream): WheelPlace => stream[STATE];
const writeHeartbeat = (stream: Stream): void => {
  stream.write(HEARTBEAT_FRAME);
};

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
  private openCount = 0;
  private readonly wheel: HeartbeatWheel<Stream>;
  private readonly maxPerToken: number;
  private readonly maxPerAddress: number;
  private readonly perToken = new Map<string, number>();
  private readonly perAddress = new Map<string, number>();

  constructor(
    private readonly store: Store,
    private readonly broadcaster: Broadcaster,
    options: PushStreamsOptions = {},
  ) {
    const heartbeatMs = options.heartbeatMs ?? 15_000;
    this.maxPerToken = options.maxPerToken ?? 10;
    this.maxPerAddress = options.maxPerAddress ?? 100;
    const slices = options.heartbeatSlices ?? heartbeatMs / 25;
    this.wheel = new HeartbeatWheel(heartbeatMs, slices, placeOf, writeHeartbeat);
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

  /** Starts the heartbeat. */
  start(): void {
    this.wheel.start(() => this.sweep());
  }

  /** Stops the heartbeat and ends every stream. */
  stop(): void {
    this.wheel.stop();
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
    return this.wheel.sizes;
  }

  /** Writes a heartbeat to the streams of the next bucket (the shared timer calls this; tests may too). */
  sweep(): void {
    this.wheel.sweep();
  }

  /** Writes a heartbeat to every open stream at once (for tests; the timer spreads them with `sweep`). */
  heartbeat(): void {
    this.wheel.beatAll();
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

    let replay: Awaited<ReturnType<typeof readReplay>>;
    try {
      replay = await readReplay(this.store, sessionId, lastEventId);
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
    if (terminal) this.detach(stream);
    writeOpening(res, frames, terminal);
    if (!terminal) this.wheel.add(stream);
  }

  /** Forgets a stream (client gone, or ended after a terminal status). */
  detach(stream: Stream): void {
    const state = stream[STATE];
    const entry = this.watched.get(state.sessionId);
    const index = entry ? entry.streams.indexOf(stream) : -1;
    if (!entry || index === -1) return;
    entry.streams.splice(index, 1);
    this.wheel.remove(stream);
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
      for (const update of await readUpdatesAfter(this.store, sessionId, after)) {
        this.deliver(update);
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
}

const noop = (): void => undefined;

/** One fewer under `key`; the entry goes when it reaches zero, so the maps follow open streams only. */
function release(counts: Map<string, number>, key: string): void {
  const left = (counts.get(key) ?? 1) - 1;
  if (left <= 0) counts.delete(key);
  else counts.set(key, left);
}

import type { StatusMessage } from '@servicepay/node/protocol';
import { createParser } from 'eventsource-parser';

/**
 * The service's reconnection interval (`PUSH_RETRY_MS` of the contract: every stream opens with `retry: 1000`),
 * used until a stream has said its own. A test holds the two equal.
 */
export const DEFAULT_RETRY_MS = 1_000;
/** Reconnection attempts after a drop; past the last one the stream reports `lost`. */
const RECONNECT_ATTEMPTS = 3;
/** Bounds on a `retry:` value, so a stream cannot make the widget spin or give up waiting for minutes. */
const RETRY_BOUNDS_MS = [250, 10_000] as const;

/**
 * How long to wait before reconnection attempt `attempt` (0 first), or undefined when it is time to report
 * `lost`: the service's `retry:` interval, doubling each time (1 s, 2 s, 4 s at the default: 7 s in all), each
 * up to 25 % shorter at random so that the checkouts a restarted instance dropped do not all come back at once.
 *
 * @example
 * reconnectDelay(0, 1_000); // 750-1000
 * reconnectDelay(3, 1_000); // undefined: lost
 */
export function reconnectDelay(attempt: number, retryMs: number, random = Math.random): number | undefined {
  if (attempt >= RECONNECT_ATTEMPTS) return undefined;
  const [low, high] = RETRY_BOUNDS_MS;
  const base = Math.min(high, Math.max(low, retryMs));
  return Math.round(base * 2 ** attempt * (1 - 0.25 * random()));
}
/** The server sends a heartbeat every 15 s: this much silence means the connection is dead (a slept laptop). */
const SILENCE_LIMIT_MS = 40_000;

export type StreamState = 'connecting' | 'open' | 'reconnecting' | 'lost';

export interface StatusStreamOptions {
  url: string;
  token: string;
  onMessage(message: StatusMessage): void;
  onState(state: StreamState): void;
  /** The service refused the token (401/403): nothing a reconnect can fix. */
  onRefused(status: number): void;
}

const TERMINAL = new Set(['successful', 'expired', 'cancelled']);

/**
 * The push stream (`GET /api/widget/sessions/{id}/events`) read with `fetch`, so the widget token travels in
 * `Authorization`, and parsed with eventsource-parser. After a drop it reconnects with `Last-Event-ID` (the
 * service replays what was missed, then the current state), on the service's schedule (the stream's `retry:`,
 * see {@link reconnectDelay}), three times; then it reports `lost`
 * and waits for `reconnectNow()` (the payer's button, the browser coming online, the tab coming back).
 * Never polls.
 *
 * @example
 * const stream = new StatusStream({ url, token, onMessage: render, onState: show, onRefused: fail });
 * stream.start();
 */
export class StatusStream {
  private lastEventId: string | undefined;
  private controller: AbortController | undefined;
  private retryTimer: ReturnType<typeof setTimeout> | undefined;
  private attempt = 0;
  private retryIntervalMs = DEFAULT_RETRY_MS;
  private stopped = false;
  private finished = false;
  private lastByteAt = 0;
  private state: StreamState = 'connecting';

  constructor(private readonly options: StatusStreamOptions) {}

  /** The reconnection interval the service asked for (its `retry:` field), or the default before it did. */
  get retryMs(): number {
    return this.retryIntervalMs;
  }

  start(): void {
    void this.connect();
  }

  stop(): void {
    this.stopped = true;
    clearTimeout(this.retryTimer);
    this.controller?.abort();
  }

  /** Reconnects at once unless a healthy stream is open (the tab came back, the network returned, a button). */
  reconnectNow(): void {
    if (this.stopped || this.finished) return;
    const silent = Date.now() - this.lastByteAt > SILENCE_LIMIT_MS;
    if (this.state === 'open' && !silent) return;
    if (this.state === 'connecting') return;
    clearTimeout(this.retryTimer);
    this.attempt = 0;
    this.controller?.abort();
    void this.connect();
  }

  private setState(state: StreamState): void {
    if (this.state === state) return;
    this.state = state;
    this.options.onState(state);
  }

  private async connect(): Promise<void> {
    const controller = new AbortController();
    this.controller = controller;
    if (this.state !== 'reconnecting') this.setState('connecting');
    const headers: Record<string, string> = {
      authorization: `Bearer ${this.options.token}`,
      accept: 'text/event-stream',
    };
    if (this.lastEventId !== undefined) headers['last-event-id'] = this.lastEventId;
    try {
      const response = await fetch(this.options.url, {
        headers,
        cache: 'no-store',
        credentials: 'omit',
        signal: controller.signal,
      });
      if (response.status === 401 || response.status === 403) {
        this.finished = true;
        this.options.onRefused(response.status);
        return;
      }
      if (!response.ok || !response.body) throw new Error(`stream answered ${response.status}`);
      await this.read(response.body, controller);
    } catch {
      // A drop, a refused connection or our own abort: handled below.
    }
    if (this.controller !== controller || this.stopped || this.finished) return;
    this.scheduleRetry();
  }

  private async read(body: ReadableStream<Uint8Array>, controller: AbortController): Promise<void> {
    const decoder = new TextDecoder();
    const parser = createParser({
      onRetry: (interval) => {
        this.retryIntervalMs = interval;
      },
      onEvent: (event) => {
        if (event.event !== 'status') return;
        let message: StatusMessage;
        try {
          message = JSON.parse(event.data) as StatusMessage;
        } catch {
          return;
        }
        if (event.id !== undefined) this.lastEventId = event.id;
        this.attempt = 0;
        this.setState('open');
        if (TERMINAL.has(message.status)) this.finished = true;
        this.options.onMessage(message);
      },
    });
    const reader = body.getReader();
    const watchdog = setInterval(() => {
      if (Date.now() - this.lastByteAt > SILENCE_LIMIT_MS) controller.abort();
    }, 5_000);
    this.lastByteAt = Date.now();
    try {
      for (let chunk = await reader.read(); !chunk.done; chunk = await reader.read()) {
        this.lastByteAt = Date.now();
        parser.feed(decoder.decode(chunk.value, { stream: true }));
      }
    } finally {
      clearInterval(watchdog);
    }
  }

  private scheduleRetry(): void {
    const delay = reconnectDelay(this.attempt, this.retryIntervalMs);
    if (delay === undefined) {
      this.setState('lost');
      return;
    }
    this.attempt++;
    this.setState('reconnecting');
    this.retryTimer = setTimeout(() => void this.connect(), delay);
  }
}

import type { StatusMessage } from '@servicepay/node/protocol';
import { createParser } from 'eventsource-parser';

/** Waits before reconnection attempts after a drop; past the last one the stream reports `lost`. */
const RETRY_DELAYS_MS = [250, 1_000, 2_000, 4_000];
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
 * service replays what was missed, then the current state), a few times with backoff; then it reports `lost`
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
  private stopped = false;
  private finished = false;
  private lastByteAt = 0;
  private state: StreamState = 'connecting';

  constructor(private readonly options: StatusStreamOptions) {}

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
    const delay = RETRY_DELAYS_MS[this.attempt];
    if (delay === undefined) {
      this.setState('lost');
      return;
    }
    this.attempt++;
    this.setState('reconnecting');
    this.retryTimer = setTimeout(() => void this.connect(), delay);
  }
}

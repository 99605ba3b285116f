import type { Environment } from '@servicepay/node/protocol';
import type { Request, Response } from 'express';
import { type ApiKey, keyHint } from '../db/api-keys.ts';
import type { NewRequestLogEntry } from '../db/request-log.ts';
import type { Store } from '../db/store.ts';
import type { Clock } from '../internal/clock.ts';
import { type Logger, redact } from '../internal/logger.ts';
import { CREDENTIAL_PARAMS } from './credential-in-url.ts';
import { errorBodyOf, receivedAtOf, requestIdOf } from './request-context.ts';

/** The longest path (with its query) the log keeps; the rest is cut. */
const MAX_PATH = 2048;
/** The longest error body the log keeps (an envelope with field errors is a few hundred bytes). */
const MAX_ERROR_BODY = 4096;

/**
 * A request's path and query as the request log keeps them: every value shaped like a credential (`sk_…`,
 * `pk_…`, `cs_…`, `wt_…`, `whsec_…`) masked wherever it is, and the value of every query parameter named like
 * one (`token`, `key`, …) masked whatever it holds. The API refuses credentials in a URL on the widget-token
 * routes, but a client can still send one anywhere; it must not be kept.
 *
 * @example
 * redactPath('/api/widget/sessions?token=abc&status=successful'); // '/api/widget/sessions?token=[redacted]&status=successful'
 */
export function redactPath(url: string): string {
  const cut = url.length > MAX_PATH ? url.slice(0, MAX_PATH) : url;
  const query = cut.indexOf('?');
  const path = redact(query < 0 ? cut : cut.slice(0, query));
  if (query < 0) return path;
  const params = cut
    .slice(query + 1)
    .split('&')
    .map((pair) => {
      const equals = pair.indexOf('=');
      const name = equals < 0 ? pair : pair.slice(0, equals);
      let decoded = name;
      try {
        decoded = decodeURIComponent(name.replace(/\+/g, ' '));
      } catch {}
      if (equals >= 0 && CREDENTIAL_PARAMS.has(decoded.toLowerCase())) return `${redact(name)}=[redacted]`;
      return redact(pair);
    });
  return `${path}?${params.join('&')}`;
}

/** Who a logged request was made by: the business, the environment and the key (kept as its hint only). */
export interface RequestOwner {
  businessId: string;
  environment: Environment;
  key: Pick<ApiKey, 'prefix' | 'last4'>;
}

export interface RequestLogOptions {
  store: Store;
  clock: Clock;
  logger: Logger;
  /** How long an entry waits for others to be written with it (ms). */
  flushDelayMs?: number;
  /** Entries waiting at most; past it new ones are dropped (and counted in the log) until a flush. */
  maxPending?: number;
}

/** Entries per write job. */
const BATCH = 500;

/**
 * The request log's writer: `track` is called by authentication once a request's key is known, and the entry
 * is made when the answer has been sent (`finish`), so nothing is added to the request's own time but a
 * listener. Entries wait in memory and are written in batches, one write job per batch, at most
 * `flushDelayMs` later (or when the service stops): a request never waits for its log entry, and a slow or
 * full disk loses log entries, never a request. A started service has one, in its background tasks.
 *
 * @example
 * const requestLog = new RequestLog({ store, clock, logger });
 * requestLog.track(req, res, { businessId, environment, key }); // in authentication
 * await requestLog.flush(); // before reading the log (the portal's Requests page)
 */
export class RequestLog {
  private pending: NewRequestLogEntry[] = [];
  private timer: NodeJS.Timeout | undefined;
  private writing: Promise<void> = Promise.resolve();
  private dropped = 0;
  private readonly flushDelayMs: number;
  private readonly maxPending: number;

  constructor(private readonly options: RequestLogOptions) {
    this.flushDelayMs = options.flushDelayMs ?? 200;
    this.maxPending = options.maxPending ?? 10_000;
  }

  /** Logs this request when its answer has been sent. */
  track(req: Request, res: Response, owner: RequestOwner): void {
    const receivedAt = receivedAtOf(res) ?? performance.now();
    const createdAt = this.options.clock.now();
    res.once('finish', () => {
      const status = res.statusCode;
      const errorBody = status >= 400 ? errorBodyOf(res) : undefined;
      this.add({
        requestId: String(requestIdOf(res) ?? res.getHeader('Request-Id') ?? ''),
        businessId: owner.businessId,
        environment: owner.environment,
        method: req.method,
        path: redactPath(req.originalUrl),
        status,
        keyHint: keyHint(owner.key),
        durationMs: Math.max(0, Math.round(performance.now() - receivedAt)),
        errorBody: errorBody === undefined ? null : redact(errorBody.slice(0, MAX_ERROR_BODY)),
        createdAt,
      });
    });
  }

  /** Writes every entry waiting now; resolves once they are written (or given up). */
  flush(): Promise<void> {
    clearTimeout(this.timer);
    this.timer = undefined;
    this.writing = this.writing.then(() => this.writeAll());
    return this.writing;
  }

  start(): void {}

  /** Writes what is waiting, before the store closes. */
  stop(): Promise<void> {
    return this.flush();
  }

  private add(entry: NewRequestLogEntry): void {
    if (this.pending.length >= this.maxPending) {
      this.dropped++;
      return;
    }
    this.pending.push(entry);
    if (this.timer === undefined) {
      this.timer = setTimeout(() => void this.flush(), this.flushDelayMs);
      this.timer.unref();
    }
  }

  private async writeAll(): Promise<void> {
    while (this.pending.length > 0) {
      const batch = this.pending.splice(0, BATCH);
      try {
        await this.options.store.writes.run((tx) => tx.requestLog.insertMany(batch));
      } catch (error) {
        // Diagnostics only: a batch that cannot be written is dropped, said once, never retried for ever.
        this.options.logger.warn('request log entries dropped', {
          dropped: batch.length,
          error: error instanceof Error ? error.message : String(error),
        });
      }
    }
    if (this.dropped > 0) {
      this.options.logger.warn('request log entries dropped', {
        dropped: this.dropped,
        reason: 'backlog full',
      });
      this.dropped = 0;
    }
  }
}

import { createHash } from 'node:crypto';
import type { Express, Request, RequestHandler, Response } from 'express';
import { PENDING_STATUS } from '../db/idempotency-keys.ts';
import type { Store } from '../db/store.ts';
import { HttpError } from '../errors.ts';
import type { Clock } from '../internal/clock.ts';
import type { Logger } from '../internal/logger.ts';
import type { SecretBox } from '../internal/secret-box.ts';
import type { ApiCaller, WidgetCaller } from './authenticate.ts';

const IDEMPOTENCY_KEY_PATTERN = /^[\x21-\x7e]{1,255}$/;

export interface IdempotencyDeps {
  store: Store;
  clock: Clock;
  secretBox: SecretBox;
  logger: Logger;
  ttlMs: number;
}

/**
 * `Idempotency-Key` for every POST the SDK retries. The first successful (2xx) answer to a key is remembered
 * per caller scope (business and environment for a key, the session for a widget token) with a hash of the
 * method, path and body; the same key and request within the TTL answers it again, byte for byte, with
 * `Idempotent-Replayed: true`; the same key with another body or on another route answers 409
 * `idempotency_key_reused`. Failures are not remembered, so a failed request can be fixed and retried.
 *
 * Requests with one key in one scope run one at a time: a second one waits until the first has answered
 * (and its answer is remembered), then replays it. The service is one process owning its SQLite file, so an
 * in-process lock covers every request. The answer is remembered (committed) before it is sent. The key is
 * marked pending (committed) before the route runs, so a restart between the effect and the remembered
 * answer leaves the mark: a retry then answers 409 instead of running the effect again.
 *
 * @example
 * createApp registers it: `IdempotentRequests.attach(app, deps)`; a route opts in after authenticating:
 * router.post('/api/webhooks', secretKey, idempotent, handler);
 */
export class IdempotentRequests {
  private readonly inFlight = new Map<string, Promise<void>>();

  constructor(private readonly deps: IdempotencyDeps) {}

  /** Makes `idempotent` work on the routes of `app`. */
  static attach(app: Express, deps: IdempotencyDeps): IdempotentRequests {
    const requests = new IdempotentRequests(deps);
    app.locals.idempotentRequests = requests;
    return requests;
  }

  async handle(req: Request, res: Response): Promise<boolean> {
    const key = req.get('Idempotency-Key');
    if (key === undefined) return false;
    if (!IDEMPOTENCY_KEY_PATTERN.test(key)) {
      throw new HttpError(
        400,
        'validation_failed',
        'Idempotency-Key must be 1 to 255 printable ASCII characters.',
        [{ path: 'Idempotency-Key', message: 'invalid header' }],
      );
    }
    const scope = scopeOf(res);
    const requestHash = createHash('sha256')
      .update(`${req.method} ${req.originalUrl}\n${canonicalJson(req.body ?? {})}`)
      .digest();
    const release = await this.lock(`${scope}\n${key}`);
    let handedOver = false;
    try {
      const { store, clock, secretBox, ttlMs } = this.deps;
      const earlier = store.idempotencyKeys.find(scope, key, clock.now() - ttlMs);
      if (earlier?.statusCode === PENDING_STATUS) {
        // No request of this process holds the key (we hold its lock), so its first request was cut off by a
        // restart after it started: it may have taken effect. Running it again could do it twice.
        throw new HttpError(
          409,
          'idempotency_key_reused',
          'The first request with this Idempotency-Key was cut off by a restart before it answered, and may have taken effect. Check the resource, then use a new key.',
        );
      }
      if (earlier) {
        if (!earlier.requestHash.equals(requestHash)) {
          throw new HttpError(
            409,
            'idempotency_key_reused',
            'This Idempotency-Key was already used with a different request (body or route). Use a new key for a new request.',
          );
        }
        res.setHeader('Idempotent-Replayed', 'true');
        sendJsonText(res.status(earlier.statusCode), secretBox.open(earlier.responseBody));
        return true;
      }
      // Committed before the route runs (some effects, the simulated bank's transfer, are not write-queue
      // jobs): a crash between the effect and its remembered answer leaves this mark behind.
      await store.writes.run(() =>
        store.idempotencyKeys.remember(
          { scope, key, createdAt: clock.now() },
          { requestHash, statusCode: PENDING_STATUS, responseBody: '' },
        ),
      );
      this.settleOnAnswer(res, { scope, key, requestHash }, release);
      handedOver = true;
      return false;
    } finally {
      if (!handedOver) release();
    }
  }

  /** Waits for any request holding `lockKey`, then holds it; resolves to the release function. */
  private async lock(lockKey: string): Promise<() => void> {
    for (let held = this.inFlight.get(lockKey); held; held = this.inFlight.get(lockKey)) await held;
    let release: () => void = () => {};
    const done = new Promise<void>((resolve) => {
      release = () => {
        if (this.inFlight.get(lockKey) === done) this.inFlight.delete(lockKey);
        resolve();
      };
    });
    this.inFlight.set(lockKey, done);
    return release;
  }

  /**
   * Wraps `res.json`: a 2xx answer is remembered (committed) first, then sent; any other answer forgets the
   * key (only successes are remembered) and is sent as is. The lock is released once that is committed.
   */
  private settleOnAnswer(
    res: Response,
    entry: { scope: string; key: string; requestHash: Buffer },
    release: () => void,
  ): void {
    const { store, clock, secretBox, logger } = this.deps;
    const json = res.json.bind(res);
    let settled = false;
    const settle = (work: () => void) =>
      store.writes.run(work).catch((error: unknown) => {
        // The route's answer stands (after a success, a 5xx would invite a second effect).
        logger.error('could not record an idempotent request', { error: String(error) });
      });
    res.on('finish', () => {
      if (settled) return;
      // Answered without res.json (not a route of this service today): forget the key rather than strand it.
      settled = true;
      void settle(() => store.idempotencyKeys.forget(entry.scope, entry.key)).finally(release);
    });
    res.json = (body: unknown) => {
      res.json = json;
      settled = true;
      const statusCode = res.statusCode;
      if (statusCode < 200 || statusCode >= 300) {
        void settle(() => store.idempotencyKeys.forget(entry.scope, entry.key)).finally(() => {
          release();
          json(body);
        });
        return res;
      }
      const text = JSON.stringify(body);
      void settle(() =>
        store.idempotencyKeys.remember(
          { scope: entry.scope, key: entry.key, createdAt: clock.now() },
          { requestHash: entry.requestHash, statusCode, responseBody: secretBox.seal(text) },
        ),
      ).finally(() => {
        release();
        sendJsonText(res, text);
      });
      return res;
    };
  }
}

/**
 * Route middleware: honours `Idempotency-Key` on this route (after authentication, which sets the scope).
 *
 * @example
 * router.post('/api/events/:id/resend', secretKey, idempotent, handler);
 */
export const idempotent: RequestHandler = async (req, res, next) => {
  const requests = req.app.locals.idempotentRequests as IdempotentRequests | undefined;
  if (!requests) throw new Error('IdempotentRequests.attach(app, ...) was not called');
  if (!(await requests.handle(req, res))) next();
};

function scopeOf(res: Response): string {
  const caller = res.locals.caller as ApiCaller | WidgetCaller | undefined;
  if (!caller) throw new Error('idempotent runs after authentication');
  if (caller.kind === 'widget') return `session:${caller.session.id}`;
  return `${caller.business.id}:${caller.environment}`;
}

/**
 * JSON with object keys sorted, so "the same body" means the same values: a client that serialises its retry
 * with the keys in another order is still retrying, not sending a new request.
 */
function canonicalJson(value: unknown): string {
  return JSON.stringify(value, (_key, field: unknown) =>
    field !== null && typeof field === 'object' && !Array.isArray(field)
      ? Object.fromEntries(Object.entries(field).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
      : field,
  );
}

/** Sends JSON text as `res.json` would send the object it came from, so a replay is byte for byte the same. */
function sendJsonText(res: Response, text: string): void {
  if (!res.get('Content-Type')) res.setHeader('Content-Type', 'application/json; charset=utf-8');
  res.send(text);
}

import type { Express, Request, RequestHandler, Response } from 'express';
import { type IdempotencyClaim, IdempotencyKeyTakenError, PENDING_STATUS } from '../db/idempotency-keys.ts';
import type { Store } from '../db/store.ts';
import { HttpError } from '../errors.ts';
import type { Clock } from '../internal/clock.ts';
import type { Logger } from '../internal/logger.ts';
import type { SecretBox } from '../internal/secret-box.ts';
import { sendJsonText } from './envelope.ts';
import { requestHashOf, scopeOf } from './idempotency-codec.ts';
import { type Unsettled, UnsettledMarks } from './unsettled-marks.ts';

const IDEMPOTENCY_KEY_PATTERN = /^[\x21-\x7e]{1,255}$/;

export interface IdempotencyDeps {
  store: Store;
  clock: Clock;
  secretBox: SecretBox;
  logger: Logger;
  ttlMs: number;
}

/** A key whose answer the route's own write job remembers (`idempotentWrite`, `idempotencyClaimFor`). */
interface WriteClaim {
  requests: IdempotentRequests;
  scope: string;
  key: string;
  requestHash: Buffer;
}

const writeClaims = new WeakMap<Response, WriteClaim>();

/**
 * `Idempotency-Key` for every POST the SDK retries. The first successful (2xx) answer to a key is remembered
 * per caller scope (business and environment for a key, the session for a widget token) with a hash of the
 * method, path and body; the same key and request within the TTL answers it again, byte for byte, with
 * `Idempotent-Replayed: true`; the same key with another body or on another route answers 409
 * `idempotency_key_reused`. Failures are not remembered, so a failed request can be fixed and retried.
 *
 * Requests with one key in one scope run one at a time: a second one waits until the first has answered
 * (and its answer is remembered), then replays it. On SQLite the service is one process owning its file, so
 * an in-process lock covers every request; across instances (PostgreSQL) the pending mark is claimed, not
 * overwritten, so only one instance runs the route for a key and the other answers 409. The answer is remembered (committed) before it is sent. The key is
 * marked pending (committed) before the route runs, so a restart between the effect and the remembered
 * answer leaves the mark: a retry then answers 409 instead of running the effect again. A route whose whole
 * effect is one write job (session create, `idempotentWrite`) skips the mark and commits the key with its effect.
 *
 * @example
 * createApp registers it: `IdempotentRequests.attach(app, deps)`; a route opts in after authenticating:
 * router.post('/api/webhooks', secretKey, idempotent, handler);
 */
export class IdempotentRequests {
  private readonly inFlight = new Map<string, Promise<void>>();
  /** Pending marks whose settling write failed, written again until they take (a full disk, then space). */
  private readonly unsettled: UnsettledMarks;

  constructor(private readonly deps: IdempotencyDeps) {
    this.unsettled = new UnsettledMarks(deps.store, deps.logger, (lockKey) => this.lock(lockKey));
  }

  /** Makes `idempotent` work on the routes of `app`. */
  static attach(app: Express, deps: IdempotencyDeps): IdempotentRequests {
    const requests = new IdempotentRequests(deps);
    app.locals.idempotentRequests = requests;
    return requests;
  }

  /**
   * Answers a retry (replay or 409) and returns true; otherwise prepares the key and returns false for the route
   * to run. `mode: 'write'` is for a route whose whole effect is one write job (session create): instead of a
   * pending mark committed first and the answer committed after, the route writes its answer with that job's
   * effect (`idempotencyClaimFor`), so key and effect commit together, in one fsync instead of three.
   */
  async handle(req: Request, res: Response, mode: 'mark' | 'write' = 'mark'): Promise<boolean> {
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
    const requestHash = requestHashOf(req);
    const lockKey = `${scope}\n${key}`;
    const release = await this.lock(lockKey);
    let handedOver = false;
    try {
      const { store, clock, ttlMs } = this.deps;
      if (mode === 'write') {
        // Not looked up first: the route's write job claims the key with its effect (idempotencyClaimFor), and only
        // when the job fails does `answerFromEarlier` look for an earlier answer (afterWrite). A key used for
        // the first time, nearly every one, so costs no read (on PostgreSQL, one round trip fewer). A crash
        // before that commit leaves neither, so a retry runs it (nothing had happened); after it, the retry
        // replays.
        writeClaims.set(res, { requests: this, scope, key, requestHash });
        // Held until the answer is out (or the client is gone), so a concurrent retry waits, then replays.
        res.once('close', release);
        handedOver = true;
        return false;
      }
      // This process left the key's mark pending when a write failed (a full disk): settle it first, so the
      // retry is not taken for a request cut off by a restart. A failure here answers as the write's (503).
      if (this.unsettled.has(lockKey)) await this.unsettled.resettle(lockKey);
      if (await this.answerFromEarlier(res, { scope, key, requestHash })) return true;
      // Committed before the route runs (some effects, the simulated bank's transfer, are not write-queue
      // jobs): a crash between the effect and its remembered answer leaves this mark behind. Claimed, not
      // overwritten: another instance of the service (on PostgreSQL) may have marked the same key since the
      // lookup above, and only one of them may run the effect.
      const now = clock.now();
      const marked = await store.writes.run((tx) =>
        tx.idempotencyKeys.claim(
          { scope, key, createdAt: now },
          { requestHash, statusCode: PENDING_STATUS, responseBody: '' },
          now - ttlMs,
        ),
      );
      if (!marked) {
        throw new HttpError(
          409,
          'idempotency_key_reused',
          'Another request with this Idempotency-Key is being answered. Retry it to get that answer.',
        );
      }
      this.settleOnAnswer(res, { scope, key, requestHash }, release);
      handedOver = true;
      return false;
    } finally {
      if (!handedOver) release();
    }
  }

  /**
   * Answers `res` from an earlier request with this key, if one is remembered: 409 when it was cut off by a
   * restart (pending) or had another body or route, else its answer again, byte for byte, with
   * `Idempotent-Replayed: true`. False when the key is free.
   */
  async answerFromEarlier(
    res: Response,
    entry: { scope: string; key: string; requestHash: Buffer },
  ): Promise<boolean> {
    const { store, clock, secretBox, ttlMs } = this.deps;
    const earlier = await store.idempotencyKeys.find(entry.scope, entry.key, clock.now() - ttlMs);
    if (!earlier) return false;
    if (earlier.statusCode === PENDING_STATUS) {
      // No request of this process holds the key (we hold its lock), so its first request was cut off by a
      // restart after it started: it may have taken effect. Running it again could do it twice.
      throw new HttpError(
        409,
        'idempotency_key_reused',
        'The first request with this Idempotency-Key was cut off by a restart before it answered, and may have taken effect. Check the resource, then use a new key.',
      );
    }
    if (!earlier.requestHash.equals(entry.requestHash)) {
      throw new HttpError(
        409,
        'idempotency_key_reused',
        'This Idempotency-Key was already used with a different request (body or route). Use a new key for a new request.',
      );
    }
    res.setHeader('Idempotent-Replayed', 'true');
    sendJsonText(res, earlier.statusCode, secretBox.open(earlier.responseBody));
    return true;
  }

  /** See `idempotencyClaimFor`. */
  claimFor(claim: WriteClaim, statusCode: number, text: string): IdempotencyClaim {
    const { clock, secretBox, ttlMs } = this.deps;
    const now = clock.now();
    return {
      entry: { scope: claim.scope, key: claim.key, createdAt: now },
      response: { requestHash: claim.requestHash, statusCode, responseBody: secretBox.seal(text) },
      notBefore: now - ttlMs,
    };
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
    const { clock, secretBox } = this.deps;
    const json = res.json.bind(res);
    const lockKey = `${entry.scope}\n${entry.key}`;
    let settled = false;
    const settle = (outcome: Unsettled) => this.unsettled.settle(lockKey, outcome);
    res.on('finish', () => {
      if (settled) return;
      // Answered without res.json (not a route of this service today): forget the key rather than strand it.
      settled = true;
      void settle({ kind: 'forget' }).finally(release);
    });
    res.json = (body: unknown) => {
      res.json = json;
      settled = true;
      const statusCode = res.statusCode;
      if (statusCode < 200 || statusCode >= 300) {
        void settle({ kind: 'forget' }).finally(() => {
          release();
          json(body);
        });
        return res;
      }
      const text = JSON.stringify(body);
      void settle({
        kind: 'answer',
        requestHash: entry.requestHash,
        statusCode,
        sealed: secretBox.seal(text),
        createdAt: clock.now(),
      }).finally(() => {
        release();
        sendJsonText(res, statusCode, text);
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

/**
 * Route middleware for a route whose whole effect is one write job: honours `Idempotency-Key` like `idempotent`
 * (replay, 409, one at a time), but the route writes its answer with that job's effect (`idempotencyClaimFor`).
 *
 * @example
 * router.post('/api/widget/sessions', secretKey, idempotentWrite, handler);
 */
export const idempotentWrite: RequestHandler = async (req, res, next) => {
  const requests = req.app.locals.idempotentRequests as IdempotentRequests | undefined;
  if (!requests) throw new Error('IdempotentRequests.attach(app, ...) was not called');
  if (!(await requests.handle(req, res, 'write'))) next();
};

/**
 * For the route's write job: the claim of this request's `Idempotency-Key` with `text` (the exact answer about
 * to be sent) as its answer, sealed, for the job to write with its effect (`SessionRepository.insertAnswered`);
 * undefined for a request without a key. A key another process holds fails the write with
 * `IdempotencyKeyTakenError`, which `afterWrite` answers.
 *
 * @example
 * await sessions.create(caller, body, (created) => idempotencyClaimFor(res, 201, (text = envelope(created))));
 */
export function idempotencyClaimFor(
  res: Response,
  statusCode: number,
  text: string,
): IdempotencyClaim | undefined {
  const claim = writeClaims.get(res);
  return claim?.requests.claimFor(claim, statusCode, text);
}

/**
 * Runs the handler of an `idempotentWrite` route. When it fails and the request carries a key, the key is looked
 * up: a request remembered under it is answered as `idempotent` answers a retry (its answer replayed, or 409),
 * whatever this one failed with (its body invalid, its reference taken by the first, the key claimed since);
 * otherwise its own error stands, and a key held by another process answers 409. The job it ran was rolled
 * back with its claim, so nothing of it happened.
 *
 * @example
 * router.post('/api/widget/sessions', secretKey, idempotentWrite, (req, res) => afterWrite(res, () => create(req, res)));
 */
export async function afterWrite(res: Response, handler: () => Promise<void>): Promise<void> {
  try {
    await handler();
  } catch (error) {
    const claim = writeClaims.get(res);
    if (!claim || res.headersSent || !(await claim.requests.answerFromEarlier(res, claim))) {
      if (error instanceof IdempotencyKeyTakenError) {
        // Only another process on the same file, or another instance, can hold it (this one holds its lock).
        throw new HttpError(
          409,
          'idempotency_key_reused',
          'Another request with this Idempotency-Key is being answered. Retry it to get that answer.',
        );
      }
      throw error;
    }
  }
}

import type { Store } from '../db/store.ts';
import type { Logger } from '../internal/logger.ts';

/** A key's pending mark whose settling write failed: what that write was to store. */
export type Unsettled =
  | { kind: 'forget' }
  | { kind: 'answer'; requestHash: Buffer; statusCode: number; sealed: string; createdAt: number };

/** Pending marks this process remembers having left (beyond it, the oldest is forgotten: it answers 409). */
const MAX_UNSETTLED = 10_000;
/** How often the settling writes that failed are tried again, while any are left. */
const RESETTLE_EVERY_MS = 5_000;

/**
 * The pending marks of idempotency keys that this process answered but could not settle: the write that was to
 * forget the key (after a failure) or remember its answer (after a success) failed itself, as on a full disk.
 * Each is written again every few seconds, and at once when its key comes back, so that the key is not taken
 * for one cut off by a restart (409) once the storage takes writes again. `IdempotentRequests` owns one.
 *
 * @example
 * const marks = new UnsettledMarks(store, logger, (lockKey) => lock(lockKey));
 * await marks.settle(lockKey, { kind: 'forget' }); // never rejects: a failed write is kept and tried again
 */
export class UnsettledMarks {
  /** What each mark's settling write was to store, by lock key (`scope\nkey`), oldest first. */
  private readonly marks = new Map<string, Unsettled>();
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly store: Store,
    private readonly logger: Logger,
    /** Holds a key's lock (`IdempotentRequests`'s): a retried write never runs beside a request on the same key. */
    private readonly lock: (lockKey: string) => Promise<() => void>,
  ) {}

  /** Whether `lockKey` has a settling write still to make. */
  has(lockKey: string): boolean {
    return this.marks.has(lockKey);
  }

  /**
   * Settles `lockKey`'s pending mark with `outcome`. Never rejects: the route's answer stands (after a success,
   * a 5xx would invite a second effect); a failed write is logged, kept and tried again later.
   */
  settle(lockKey: string, outcome: Unsettled): Promise<void> {
    this.marks.set(lockKey, outcome);
    return this.resettle(lockKey).catch(() => {});
  }

  /**
   * Writes what settles the pending mark of `lockKey`: forgets the key, or remembers the answer that was sent
   * (also what `IdempotentRequests` does first when the key comes back). Rejects with the store's error when that write fails; the entry then stays for the next try.
   */
  async resettle(lockKey: string): Promise<void> {
    const outcome = this.marks.get(lockKey);
    if (!outcome) return;
    const newline = lockKey.indexOf('\n');
    const scope = lockKey.slice(0, newline);
    const key = lockKey.slice(newline + 1);
    try {
      await this.store.writes.run((tx) =>
        outcome.kind === 'forget'
          ? tx.idempotencyKeys.forget(scope, key)
          : tx.idempotencyKeys.remember(
              { scope, key, createdAt: outcome.createdAt },
              {
                requestHash: outcome.requestHash,
                statusCode: outcome.statusCode,
                responseBody: outcome.sealed,
              },
            ),
      );
    } catch (error) {
      this.logger.error('could not record an idempotent request; will try again', {
        error: error instanceof Error ? error.message : String(error),
      });
      // The oldest is given up first when too many are left (its key then answers 409, as before).
      if (this.marks.size > MAX_UNSETTLED) this.marks.delete(this.marks.keys().next().value as string);
      this.scheduleResettle();
      throw error;
    }
    // Unless a newer request with the key left an entry of its own meanwhile.
    if (this.marks.get(lockKey) === outcome) this.marks.delete(lockKey);
  }

  /** Tries the failed settling writes again every few seconds, while any are left. */
  private scheduleResettle(): void {
    if (this.timer) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      void (async () => {
        for (const lockKey of [...this.marks.keys()]) {
          // Under the key's lock: never beside a request that is settling or reading the same key.
          const release = await this.lock(lockKey);
          try {
            await this.resettle(lockKey);
          } catch {
            // Scheduled again by resettle; the rest would fail the same way now.
            return;
          } finally {
            release();
          }
        }
      })();
    }, RESETTLE_EVERY_MS);
    // A service that is closing must not be held open by it.
    this.timer.unref();
  }
}

import type { Logger } from '../internal/logger.ts';
import type { Writes } from './repositories.ts';
import { storageFull } from './storage-errors.ts';

export interface StorageHealthOptions {
  /** One small write that needs new space (`Store.probeWrite`): resolves once it is committed. */
  probeWrite: () => Promise<void>;
  logger: Logger;
  /** The least time between two probes while the storage is full (default 1 s): `/health` may be asked often. */
  probeIntervalMs?: number;
  now?: () => number;
}

/**
 * Whether the store takes writes, for `GET /health`. It is marked full by any write that fails for lack of
 * space (`storageFull`): every job of `watch(store.writes)`, and what the error handler is shown
 * (`noteFailure`: a write outside the queue, such as the simulated bank's books). It is marked healthy again
 * only by a probe write that succeeds, never by another job that succeeded, since a job that had nothing to
 * write (the webhook worker finding no delivery due) commits on a full disk too. While full, `takesWrites`
 * runs the probe: one at a time, at most one per `probeIntervalMs`, the callers in between get the last answer.
 * So an instance a load balancer took out of rotation, which no client write reaches any more, still finds out
 * by itself when space is back. Each change is logged once.
 *
 * @example
 * const health = new StorageHealth({ probeWrite: () => store.probeWrite(), logger });
 * const writes = health.watch(store.writes);
 * if (!(await health.takesWrites())) answer503();
 */
export class StorageHealth {
  private fullSince: number | undefined;
  private probing: Promise<boolean> | undefined;
  private lastProbeAt = Number.NEGATIVE_INFINITY;
  private readonly probeIntervalMs: number;
  private readonly now: () => number;

  constructor(private readonly options: StorageHealthOptions) {
    this.probeIntervalMs = options.probeIntervalMs ?? 1_000;
    this.now = options.now ?? Date.now;
  }

  /** True from a write that failed for lack of space until a probe write succeeds. */
  get full(): boolean {
    return this.fullSince !== undefined;
  }

  /**
   * `writes`, with every job's failure shown to `noteFailure`; jobs, results and errors are unchanged. `watched`
   * is the queue itself, for a tool that times its internals (bench/support/push-server.ts).
   */
  watch<R>(writes: Writes<R>): Writes<R> & { readonly watched: Writes<R> } {
    return {
      watched: writes,
      run: (work, options) =>
        writes.run(work, options).catch((error: unknown) => {
          this.noteFailure(error);
          throw error;
        }),
    };
  }

  /**
   * Marks the storage full when `error` says there was no space for a write; answers whether it did.
   *
   * @example
   * if (health.noteFailure(error)) return answer503();
   */
  noteFailure(error: unknown): boolean {
    if (!storageFull(error)) return false;
    if (this.fullSince === undefined) {
      this.fullSince = this.now();
      // Probe no sooner than the interval after the failure that revealed it.
      this.lastProbeAt = this.fullSince;
      this.options.logger.error(
        'storage full: writes fail for lack of space; writes and /health answer 503 until one succeeds again',
        { error: error instanceof Error ? error.message : String(error) },
      );
    }
    return true;
  }

  /**
   * Whether writes are taken: at once while nothing failed; while full, the answer of a probe write (or of the
   * last one, within `probeIntervalMs` of it).
   */
  async takesWrites(): Promise<boolean> {
    if (this.fullSince === undefined) return true;
    if (this.probing) return this.probing;
    if (this.now() - this.lastProbeAt < this.probeIntervalMs) return false;
    this.lastProbeAt = this.now();
    this.probing = this.options
      .probeWrite()
      .then(
        () => {
          this.recovered();
          return true;
        },
        (error: unknown) => {
          // A probe that failed for another reason (the database unreachable) says nothing about space, and
          // `/health` finds that out with its own ping: the state stays as it was.
          this.noteFailure(error);
          return false;
        },
      )
      .finally(() => {
        this.probing = undefined;
      });
    return this.probing;
  }

  private recovered(): void {
    if (this.fullSince === undefined) return;
    const fullForMs = this.now() - this.fullSince;
    this.fullSince = undefined;
    this.options.logger.info('storage takes writes again; /health answers 200', { fullForMs });
  }
}

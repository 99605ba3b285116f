import { once } from 'node:events';
import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';
import type { SqliteDatabase } from './database.ts';

/** Commits before the first checkpoint: a service that writes little never starts the thread. */
export const FIRST_CHECKPOINT_AFTER_COMMITS = 64;
/**
 * Commits between two checkpoints once running (a pass is asked for only when the last one has ended). Passes
 * every 64 commits made 3–4 % more creates (a larger pass writes a page several batches changed once, and
 * fsyncs the file less often), but at 1M sessions their bursts of writes all over the file doubled a create's
 * p99 (21 to 42 ms, 28 ms with the catch-up passes below) and took p99.9 from 30 to about 50 ms
 * (`npm run bench -- list-latency`, 2026-11-27).
 */
export const CHECKPOINT_EVERY_COMMITS = 8;
/**
 * WAL frames (pages) past which the event loop finishes a checkpoint itself, so that the next write starts the
 * WAL again from its beginning: 4096 frames of 4 KiB, 16 MiB. See `WalCheckpointer`.
 */
export const RESTART_WAL_AT_FRAMES = 4096;
/** SQLite's own threshold (pages) for a checkpoint on commit, restored if the thread fails. */
const SQLITE_DEFAULT_AUTOCHECKPOINT = 1000;
/** Frames a pass may have copied for the event loop to finish the checkpoint itself (else one more pass runs). */
const FEW_FRAMES = 256;

/** What `PRAGMA wal_checkpoint` answers: whether it was blocked, the WAL's frames, how many are in the file now. */
export interface CheckpointResult {
  busy: number;
  log: number;
  checkpointed: number;
}

type WorkerReply = { result: CheckpointResult } | { error: string };

// Plain JavaScript evaluated in the worker (a file of its own would need the TypeScript loader the service
// runs under, which a worker of a test runner does not have). It opens its own connection to the same file.
const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const Database = require(workerData.driver);
const db = new Database(workerData.path);
db.pragma('busy_timeout = 5000');
parentPort.on('message', (message) => {
  if (message === 'close') {
    db.close();
    parentPort.close();
    return;
  }
  try {
    const [result] = db.pragma('wal_checkpoint(PASSIVE)');
    parentPort.postMessage({ result });
  } catch (error) {
    parentPort.postMessage({ error: String(error) });
  }
});
`;

/**
 * Checkpoints the WAL of the service's SQLite file on a worker thread with a connection of its own, instead of
 * in the `COMMIT` that crosses SQLite's threshold (`wal_autocheckpoint`, 1000 pages): copying the WAL's pages
 * into the database file and fsyncing it held the event loop for 3 to 20 ms every few dozen batches, and at 1M
 * sessions that was most of a create's commit time (issue 12; docs/decisions/durability-and-storage.md, "Checkpoints run on a worker thread"). A `PASSIVE`
 * checkpoint takes no lock a writer needs, so commits go on while it runs, and nothing about durability moves:
 * each commit is still fsynced in its own `COMMIT`, and a checkpoint only copies what is already durable.
 *
 * A WAL only starts again from its beginning when a write finds every frame copied, and under steady writes a pass
 * on the thread never ends with nothing new behind it, so the file would grow for as long as the load lasts. When
 * a pass reports `RESTART_WAL_AT_FRAMES` or more, passes follow one another until one copies only a few frames;
 * then the event loop checkpoints the few frames committed since, itself, between batches (the thread is idle
 * then), and the next write starts the WAL again. A pass that fails is reported to `onError` and the next is
 * tried as usual; if the thread itself fails, it is reported and SQLite's own checkpoint on commit is turned back
 * on. SQLite's own checkpoint on close still runs when the service closes the file.
 *
 * @example
 * const checkpointer = WalCheckpointer.attach(db, path, (error) => logger.error('checkpoint failed', { error }));
 * // after each commit: checkpointer.committed(); on shutdown, before db.close(): await checkpointer.close();
 */
export class WalCheckpointer {
  private worker: Worker | undefined;
  private running = false;
  private commitsSinceAsked = 0;
  private started = false;
  private checkpointedBefore = 0;
  private closed = false;

  private constructor(
    private readonly db: SqliteDatabase,
    private readonly path: string,
    private readonly onError: (error: unknown) => void,
  ) {}

  /** Takes over checkpointing `db` (a file, not `:memory:`): SQLite's own checkpoint on commit is turned off. */
  static attach(db: SqliteDatabase, path: string, onError: (error: unknown) => void): WalCheckpointer {
    db.pragma('wal_autocheckpoint = 0');
    return new WalCheckpointer(db, path, onError);
  }

  /** Called after every commit of the service's connection; asks for a pass when one is due and none runs. */
  committed(): void {
    this.commitsSinceAsked++;
    if (this.running || this.closed) return;
    const due = this.started ? CHECKPOINT_EVERY_COMMITS : FIRST_CHECKPOINT_AFTER_COMMITS;
    if (this.commitsSinceAsked < due) return;
    this.started = true;
    this.askForPass();
  }

  private askForPass(): void {
    this.commitsSinceAsked = 0;
    try {
      this.workerOf().postMessage('checkpoint');
      this.running = true;
    } catch (error) {
      // No thread (out of resources): the WAL waits for the next pass, or for the close's own checkpoint.
      this.onError(error);
    }
  }

  /** Stops the thread and closes its connection; call before closing `db`. */
  async close(): Promise<void> {
    this.closed = true;
    const worker = this.worker;
    if (!worker) return;
    this.worker = undefined;
    const exited = once(worker, 'exit');
    worker.postMessage('close');
    await exited;
  }

  private workerOf(): Worker {
    if (this.worker) return this.worker;
    const driver = createRequire(import.meta.url).resolve('better-sqlite3');
    const worker = new Worker(WORKER_SOURCE, { eval: true, workerData: { driver, path: this.path } });
    // The service's close ends it; a process that never closes its service must still be able to exit.
    worker.unref();
    worker.on('message', (reply: WorkerReply) => this.passEnded(reply));
    // The thread itself failed (it could not open the file, or crashed): SQLite's own checkpoint on commit takes
    // over again, so the WAL stays bounded, and no thread is started again.
    worker.on('error', (error) => {
      this.onError(error);
      this.worker = undefined;
      this.running = false;
      this.closed = true;
      this.db.pragma(`wal_autocheckpoint = ${SQLITE_DEFAULT_AUTOCHECKPOINT}`);
    });
    this.worker = worker;
    return worker;
  }

  private passEnded(reply: WorkerReply): void {
    this.running = false;
    if ('error' in reply) {
      this.onError(new Error(`WAL checkpoint failed: ${reply.error}`));
      return;
    }
    const { log, checkpointed } = reply.result;
    // Frames this pass copied (the count starts again from 0 when the WAL restarts).
    const copied =
      checkpointed >= this.checkpointedBefore ? checkpointed - this.checkpointedBefore : checkpointed;
    this.checkpointedBefore = checkpointed;
    if (this.closed || log < RESTART_WAL_AT_FRAMES) return;
    // Catch up on the thread first: each pass copies what was committed during the last one, so passes get
    // shorter, and the event loop is left only the few frames of the last (with a pass every 64 commits, the
    // pages left to it at 1M sessions took a create's p99 to 42 ms without this, 28 ms with it).
    if (copied > FEW_FRAMES) {
      this.askForPass();
      return;
    }
    // A batch runs from BEGIN to COMMIT within one turn of the event loop, so none is open here; checked anyway.
    if (this.db.inTransaction) return;
    try {
      this.db.pragma('wal_checkpoint(PASSIVE)');
    } catch (error) {
      this.onError(error);
    }
  }
}

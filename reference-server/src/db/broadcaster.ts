import type { StatusMessage } from '@servicepay/node/protocol';
import type { WriteContext } from './repositories.ts';

/** One push to the open checkouts of a session: the transition's event sequence number and its message. */
export interface SessionUpdate {
  sessionId: string;
  /** The `events.seq` of the transition; the SSE `id:`, so a reconnecting stream can resume after it. */
  seq: number;
  message: StatusMessage;
}

export type SessionUpdateListener = (update: SessionUpdate) => void;

/**
 * Fan-out of committed session transitions to whoever listens (the push streams). One interface so that a
 * multi-instance implementation (Postgres LISTEN/NOTIFY) can replace the in-process one.
 *
 * What a listener may rely on, and what it may not: an update is published only after its transition is
 * committed, and every update committed after `subscribe` returned is delivered at least once. Deliveries may
 * come late, more than once, out of order, or carry a transition the listener already read from the events
 * table: the push stream subscribes before it reads, and orders and deduplicates by `seq` itself.
 */
export interface Broadcaster {
  /** Called once the transition's write is committed (after-commit effect of its write job). */
  publish(update: SessionUpdate): void;
  /**
   * Called inside the transition's write job: `update` is delivered once the job commits, never if it rolls
   * back. In one process that is an after-commit effect; across instances (PostgreSQL) the notification is
   * sent inside the transaction, with its `COMMIT` (`WriteContext.beforeCommit`), so that an instance dying
   * between its commit and its publish cannot lose it.
   */
  publishOnCommit(context: WriteContext, update: SessionUpdate): void;
  /**
   * Starts delivering `sessionId`'s updates to `listener` (from any moment on, even before this returns);
   * returns the function that stops listening.
   */
  subscribe(sessionId: string, listener: SessionUpdateListener): () => void;
}

/** Fan-out inside one process: a listener set per session, nothing kept for sessions nobody watches. */
export class InProcessBroadcaster implements Broadcaster {
  private readonly listeners = new Map<string, Set<SessionUpdateListener>>();

  publish(update: SessionUpdate): void {
    const set = this.listeners.get(update.sessionId);
    if (!set) return;
    for (const listener of set) listener(update);
  }

  publishOnCommit(context: WriteContext, update: SessionUpdate): void {
    context.afterCommit(() => this.publish(update));
  }

  subscribe(sessionId: string, listener: SessionUpdateListener): () => void {
    let set = this.listeners.get(sessionId);
    if (!set) {
      set = new Set();
      this.listeners.set(sessionId, set);
    }
    set.add(listener);
    return () => {
      const current = this.listeners.get(sessionId);
      if (!current) return;
      current.delete(listener);
      if (current.size === 0) this.listeners.delete(sessionId);
    };
  }

  /** How many sessions have at least one listener (for tests and metrics). */
  get watchedSessions(): number {
    return this.listeners.size;
  }
}

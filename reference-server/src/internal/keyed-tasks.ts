/**
 * Work started at most once per key at a time, on the next turn of the event loop, and remembered while it
 * runs: how the service asks its bank after a write job committed (the job that recorded the ask has settled by
 * the next turn, whatever store it ran on), and how a caller waits for that ask. A failure is handed to
 * `onError` and never rethrown: what failed stays recorded as pending for the next sweep to ask again.
 *
 * @example
 * const asks = new KeyedTasks();
 * asks.start(refund.id, () => payout(refund), (error) => logger.warn('not recorded', { error }));
 * await asks.settled(refund.id); // the ask is over, however it ended
 */
export class KeyedTasks {
  private readonly running = new Map<string, Promise<void>>();

  /** Whether work for `key` is running. */
  has(key: string): boolean {
    return this.running.has(key);
  }

  /** Starts `work` for `key` on the next turn, unless work for `key` is running already. */
  start(key: string, work: () => Promise<void>, onError: (error: unknown) => void): void {
    if (this.running.has(key)) return;
    const task = new Promise<void>((resolve) => setImmediate(resolve))
      .then(work)
      .catch(onError)
      .finally(() => this.running.delete(key));
    this.running.set(key, task);
  }

  /**
   * What a sweep does with the records still pending: starts, through `start`, the work of each one whose key
   * has none running already, and resolves once those are over; answers how many it started. A record this
   * instance is asking about already is left to that ask.
   */
  async askAgain<T>(
    pending: readonly T[],
    keyOf: (record: T) => string,
    start: (record: T) => void,
  ): Promise<number> {
    const started = pending.filter((record) => !this.has(keyOf(record)));
    for (const record of started) start(record);
    await Promise.all(started.map((record) => this.settled(keyOf(record))));
    return started.length;
  }

  /** Resolves once the work for `key` is over (at once when none runs). Never rejects. */
  async settled(key: string): Promise<void> {
    await this.running.get(key);
  }
}

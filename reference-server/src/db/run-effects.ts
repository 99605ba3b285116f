/**
 * Runs a committed job's `afterCommit` effects in the order they were registered, on both stores' write queues.
 * An effect that throws, or returns a promise that rejects, is handed to `onEffectError` and the next one still
 * runs: the write is committed and stays so whatever its effects do. An effect is typed `() => void`, but an
 * `async` one type-checks as that too, and its rejection would otherwise be unhandled (on SQLite it was, until
 * issue 35: this one function replaced the two queues' copies, which had drifted apart).
 *
 * @example
 * runEffects([() => broadcaster.publish(update)], (error) => logger.error('effect failed', { error }));
 */
export function runEffects(
  effects: ReadonlyArray<() => void>,
  onEffectError: (error: unknown) => void,
): void {
  for (const effect of effects) {
    try {
      const result: unknown = effect();
      if (isThenable(result)) result.then(undefined, onEffectError);
    } catch (error) {
      onEffectError(error);
    }
  }
}

const isThenable = (value: unknown): value is PromiseLike<unknown> =>
  typeof (value as { then?: unknown } | null)?.then === 'function';

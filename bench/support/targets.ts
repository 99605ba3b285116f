/**
 * How a benchmark states a target it measured, so that `npm run bench` can end with one table of every target
 * from one run. Each benchmark still prints its own detailed table; `reportTarget` adds one machine-readable
 * line that `bench/run.ts` collects.
 */

/** One measured target: the figure, the baseline it was measured against in the same run, and the verdict. */
export interface TargetRow {
  /** What was measured, as the table names it. */
  measure: string;
  /** The figure, with its unit (`0.71×`, `p99.9 12.4 ms`). */
  figure: string;
  /** The baseline from the same run it is compared with, with its figure. */
  baseline: string;
  /** The target, as written in the issue (`≥ 0.6×`, `≤ 2 ms`). */
  target: string;
  met: boolean;
  /** Replaces met/missed in the table for a figure with no target (`measured`); such rows are not counted. */
  verdict?: string;
}

/** The prefix of a target line on a benchmark's stdout. */
export const TARGET_LINE_PREFIX = '::target::';

/**
 * Prints a target line for `bench/run.ts`'s closing table.
 *
 * @example
 * reportTarget({ measure: 'session create vs express', figure: '0.71×', baseline: 'express 6,210 req/s',
 *   target: '≥ 0.6×', met: true });
 */
export function reportTarget(row: TargetRow): void {
  console.log(`${TARGET_LINE_PREFIX}${JSON.stringify(row)}`);
}

/** Reads a target line; undefined for any other line. */
export function parseTargetLine(line: string): TargetRow | undefined {
  if (!line.startsWith(TARGET_LINE_PREFIX)) return undefined;
  try {
    return JSON.parse(line.slice(TARGET_LINE_PREFIX.length)) as TargetRow;
  } catch {
    return undefined;
  }
}

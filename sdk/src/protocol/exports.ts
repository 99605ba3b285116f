import { z } from 'zod';
import { EnvironmentSchema } from './common.ts';

/**
 * One end of an export's range: a UTC day `YYYY-MM-DD` (its midnight, UTC) or an instant in ISO 8601 with its
 * offset (`2026-12-01T00:00:00+01:00`; a time without an offset is refused: it names no instant).
 */
export const ExportRangeBoundSchema = z.union([z.iso.date(), z.iso.datetime({ offset: true })]);

/**
 * The epoch milliseconds a range bound names (a day: its midnight UTC).
 *
 * @example
 * exportBoundMs('2026-12-01'); // Date.UTC(2026, 11, 1)
 */
export function exportBoundMs(bound: string): number {
  return Date.parse(bound.length === 10 ? `${bound}T00:00:00Z` : bound);
}

/**
 * Query of `GET /api/exports/balance-transactions` and `GET /api/exports/sessions`: what was created in
 * `[createdFrom, createdTo)` (from included, to excluded; either may be left open), in the key's environment.
 * One day is `createdFrom=2026-12-01&createdTo=2026-12-02`.
 */
export const ExportParamsSchema = z
  .object({
    environment: EnvironmentSchema.optional(),
    createdFrom: ExportRangeBoundSchema.optional(),
    createdTo: ExportRangeBoundSchema.optional(),
  })
  .refine(
    ({ createdFrom, createdTo }) =>
      createdFrom === undefined ||
      createdTo === undefined ||
      exportBoundMs(createdFrom) < exportBoundMs(createdTo),
    { path: ['createdTo'], message: 'must be after createdFrom' },
  );
export type ExportParams = z.input<typeof ExportParamsSchema>;

/**
 * What a database or filesystem error says about the storage itself, read from the error's `code` alone
 * (SQLite's result code, PostgreSQL's SQLSTATE, Node's errno name), so that nothing here depends on a driver.
 * The errors a write meets when the disk under the data is full: the write did not happen, nothing the client
 * sent is at fault, and the same request succeeds once there is space again.
 */

/**
 * Codes that mean "no space left for this write":
 * - `SQLITE_FULL`: SQLite turns a write's `ENOSPC` into this itself (`unixWrite` in `os_unix.c`), and answers it
 *   when a file would pass its page limit (`max_page_count`).
 * - `SQLITE_IOERR_FSYNC`, `SQLITE_IOERR_SHMSIZE`: the two ways a full disk reaches SQLite as an I/O error instead:
 *   an `fsync` that finds no block for data written earlier (delayed allocation), and the WAL index (`-shm`)
 *   that cannot grow. SQLite does not hand the errno on, so an `fsync` that failed for another reason (a failing
 *   disk) is answered the same way; that answer (retry later, instance out of rotation) suits it as well.
 * - `SQLITE_IOERR_WRITE`: a write that failed with another errno than `ENOSPC`, such as `EDQUOT` (the quota of
 *   the user the service runs as is used up: a full disk for this service). The same caveat as for `fsync`.
 * - `ENOSPC`, `EDQUOT`: Node's own, from a file the service writes itself.
 * - `53100` (`disk_full`): PostgreSQL could not extend a file; `53200` (`out_of_memory`) and the rest of class
 *   53 are not a full disk and stay faults.
 */
const STORAGE_FULL_CODES = new Set([
  'SQLITE_FULL',
  'SQLITE_IOERR_FSYNC',
  'SQLITE_IOERR_SHMSIZE',
  'SQLITE_IOERR_WRITE',
  'ENOSPC',
  'EDQUOT',
  '53100',
]);

/** How deep `storageFull` follows `cause`: a repository or a queue may wrap the driver's error. */
const MAX_CAUSE_DEPTH = 8;

/**
 * Whether `error`, or an error in its `cause` chain, says the storage has no space for a write: SQLite's
 * `SQLITE_FULL` (and the I/O errors a full disk shows up as), Node's `ENOSPC`/`EDQUOT`, PostgreSQL's SQLSTATE
 * `53100` (`disk_full`). The service answers such a failure 503 `service_unavailable` with `Retry-After`, and
 * `GET /health` answers 503 until a write succeeds again (`StorageHealth`).
 *
 * @example
 * if (storageFull(error)) return sendError(res, new HttpError(503, 'service_unavailable', '…'));
 */
export function storageFull(error: unknown): boolean {
  for (let current = error, depth = 0; current && depth < MAX_CAUSE_DEPTH; depth++) {
    const code = (current as { code?: unknown }).code;
    if (typeof code === 'string' && STORAGE_FULL_CODES.has(code)) return true;
    current = (current as { cause?: unknown }).cause;
  }
  return false;
}

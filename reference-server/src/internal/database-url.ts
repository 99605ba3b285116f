/**
 * `SERVICEPAY_DATABASE_URL` as the CLI and `npm start` read it and print it: the same check, and the same
 * password-free spelling in every line a person reads.
 */

/** Whether `url` names a PostgreSQL database (`postgres://` or `postgresql://`). */
export function isPostgresUrl(url: string): boolean {
  return /^postgres(ql)?:\/\//.test(url);
}

/**
 * A database URL as it may be printed: without its password.
 *
 * @example
 * redactDatabaseUrl('postgres://app:s3cret@db:5432/pay'); // 'postgres://app:…@db:5432/pay'
 */
export function redactDatabaseUrl(url: string): string {
  return url.replace(/\/\/([^:/@]+):[^@]*@/, '//$1:…@');
}

/** Where the service keeps its data, for a banner or a ready line: the SQLite file, or PostgreSQL redacted. */
export function storeLocation(config: { dbPath: string; databaseUrl: string | null }): string {
  return config.databaseUrl === null ? config.dbPath : redactDatabaseUrl(config.databaseUrl);
}

import { createWriteStream, existsSync, renameSync, rmSync } from 'node:fs';
import { Readable, type Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { parseArgs } from 'node:util';
import { EnvironmentSchema, ExportParamsSchema } from '@servicepay/node/protocol';
import { defaultConfig } from './config.ts';
import { openBackend } from './db/backend.ts';
import { csvWriter } from './exports/csv-writer.ts';
import { type ExportKind, ExportService } from './exports/export-service.ts';
import { isPostgresUrl, redactDatabaseUrl } from './internal/database-url.ts';
import { silentLogger } from './internal/logger.ts';

/** The usage line `servicepay-server --help` prints for this command. */
export const EXPORT_USAGE =
  'servicepay-server export balance-transactions|sessions --business ID --environment test|live [--from DATE] [--to DATE] [--out FILE] [--db PATH|--database-url URL]';

const HELP = `${EXPORT_USAGE}

Writes the CSV the API's GET /api/exports/<kind> answers (RFC 4180, UTF-8 with a BOM, formulas neutralised)
for what the business created in [--from, --to): a day YYYY-MM-DD (midnight UTC) or an ISO 8601 instant with
its offset; either may be left out. To standard output, or to --out FILE (written beside it as FILE.partial
and renamed when complete, so a failed export never leaves a short file under FILE).`;

const KINDS: readonly ExportKind[] = ['balance-transactions', 'sessions'];

const OPTIONS = {
  business: { type: 'string' },
  environment: { type: 'string' },
  from: { type: 'string' },
  to: { type: 'string' },
  out: { type: 'string' },
  db: { type: 'string' },
  'database-url': { type: 'string' },
  help: { type: 'boolean', short: 'h' },
} as const;

class UsageError extends Error {}

/** Counts the rows of the pages that pass (the header excluded), for the closing line. */
async function* counted<T>(pages: AsyncIterable<T[]>, count: { rows: number }): AsyncGenerator<T[]> {
  count.rows = -1;
  for await (const page of pages) {
    count.rows += page.length;
    yield page;
  }
}

async function run(argv: string[], stdout: Writable): Promise<void> {
  const { values, positionals } = parseArgs({
    args: argv,
    options: OPTIONS,
    allowPositionals: true,
    strict: true,
  });
  if (values.help) {
    stdout.write(`${HELP}\n`);
    return;
  }
  const kind = KINDS.find((known) => known === positionals.join(' '));
  if (kind === undefined) throw new UsageError(`export what? ${KINDS.join(' or ')}`);
  if (!values.business) throw new UsageError('--business is required');
  const environment = EnvironmentSchema.safeParse(values.environment);
  if (!environment.success) throw new UsageError('--environment is test or live');
  const range = ExportParamsSchema.safeParse({ createdFrom: values.from, createdTo: values.to });
  if (!range.success) {
    const field = range.error.issues[0]?.path[0] === 'createdTo' ? '--to' : '--from';
    throw new UsageError(
      `${field} is a day (YYYY-MM-DD) or an ISO 8601 instant with its offset, and --to comes after --from`,
    );
  }

  const url = values['database-url'] ?? process.env.SERVICEPAY_DATABASE_URL ?? null;
  const path = values.db ?? process.env.SERVICEPAY_DB ?? defaultConfig().dbPath;
  if (url !== null && !isPostgresUrl(url)) throw new UsageError('--database-url is a postgres:// URL');
  // Only reads: a mistyped path must not answer an empty export from a new, empty file.
  if (url === null && !existsSync(path)) throw new UsageError(`no database at ${path}`);
  const backend = openBackend(
    { dbPath: path, databaseUrl: url },
    { logger: silentLogger, onEffectError: () => undefined, forCommand: true },
  );
  try {
    try {
      await backend.start();
    } catch (error) {
      throw new Error(
        `cannot use the database at ${url === null ? path : redactDatabaseUrl(url)}: ${(error as Error).message}`,
      );
    }
    if (!(await backend.store.businesses.find(values.business)))
      throw new UsageError(`no business ${values.business}`);
    const request = {
      businessId: values.business,
      environment: environment.data,
      createdFrom: range.data.createdFrom,
      createdTo: range.data.createdTo,
    };
    const exports = new ExportService(backend.store);
    const count = { rows: 0 };
    const rows = Readable.from(counted(exports.pages(kind, request), count));
    if (values.out === undefined) {
      await pipeline(rows, csvWriter(), stdout, { end: false });
      return;
    }
    const partial = `${values.out}.partial`;
    try {
      await pipeline(rows, csvWriter(), createWriteStream(partial));
      renameSync(partial, values.out);
    } catch (error) {
      rmSync(partial, { force: true });
      throw error;
    }
    console.error(`${count.rows} rows written to ${values.out}`);
  } finally {
    await backend.close();
  }
}

/**
 * `servicepay-server export …`: the CSV exports from the command line, straight from the database (no server
 * needed), the same rows and bytes as the API's. Resolves with the exit code: 0 written, 2 a usage mistake, 1
 * any other failure (one line on standard error; `--out` then holds nothing new).
 *
 * @example
 * process.exitCode = await runExportCommand(['sessions', '--business', 'biz_…', '--environment', 'test', '--from', '2026-12-01']);
 */
export async function runExportCommand(argv: string[], stdout: Writable = process.stdout): Promise<number> {
  try {
    await run(argv, stdout);
    return 0;
  } catch (error) {
    if (
      error instanceof UsageError ||
      (error instanceof TypeError && 'code' in error && String(error.code).startsWith('ERR_PARSE_ARGS'))
    ) {
      console.error(`${error.message}\n\n${EXPORT_USAGE}`);
      return 2;
    }
    console.error(error instanceof Error ? error.message : String(error));
    return 1;
  }
}

import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';
import { openDatabase } from '../../reference-server/src/db/database.ts';
import { migratePostgres } from '../../reference-server/src/db/postgres/migrate-postgres.ts';
import { Table } from '../../reference-server/src/db/table.ts';
import { ROOT } from '../support/child-process.ts';
import { postgresAvailable, reportIfPostgresMissing } from '../support/postgres.ts';
import { useScratchDatabase } from '../support/scratch-database.ts';

// Issue 35: every `table()` declaration (db/table.ts) names exactly the columns its table has once migrated, on
// both stores. Without this a column misspelt in a declaration, or added by a migration and not declared,
// showed only when a statement built from the declaration failed (or silently left the column out).

reportIfPostgresMissing();

const DB = join(ROOT, 'reference-server', 'src', 'db');

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return entry.name.endsWith('.ts') && !entry.name.endsWith('.test.ts') ? [path] : [];
  });
}

/** Every table declared under db/, by SQL name: the SQL name of each of its columns, sorted. */
async function declaredTables(): Promise<Record<string, string[]>> {
  // Each table as far as this test reads it: its name and the SQL name of each column.
  const found = new Map<string, { name: string; keys: string[]; column(key: string): string }>();
  let declarations = 0;
  for (const file of sourceFiles(DB)) {
    // table.ts's own examples are comments, not declarations.
    if (file !== join(DB, 'table.ts'))
      declarations += readFileSync(file, 'utf8').match(/=\s*table\(/g)?.length ?? 0;
    const module = (await import(pathToFileURL(file).href)) as Record<string, unknown>;
    for (const value of Object.values(module)) {
      if (value instanceof Table) found.set(value.name, value);
    }
  }
  // Each declaration in the source is exported, and so seen here: none escapes the check unexported.
  expect(found.size, 'table() declarations under db/ that are not exported').toBe(declarations);
  return Object.fromEntries(
    [...found.values()].map((table) => [table.name, table.keys.map((key) => table.column(key)).sort()]),
  );
}

/** The same tables' columns as the migrated schema has them. */
function columnsOf(
  rows: Array<{ table: string; column: string }>,
  names: string[],
): Record<string, string[]> {
  const out: Record<string, string[]> = Object.fromEntries(names.map((name) => [name, []]));
  for (const { table, column } of rows) out[table]?.push(column);
  for (const columns of Object.values(out)) columns.sort();
  return out;
}

/** Runs `check` on a SQLite file migrated from scratch, with the declared tables' columns as the file has them. */
function withMigratedSqlite(
  check: (columns: () => Record<string, string[]>, db: ReturnType<typeof openDatabase>) => void,
): void {
  const folder = mkdtempSync(join(tmpdir(), 'servicepay-tables-'));
  const db = openDatabase(join(folder, 'servicepay.db'));
  const columns = () =>
    columnsOf(
      db
        .prepare<[], { table: string; column: string }>(
          `SELECT m.name AS "table", c.name AS "column"
             FROM sqlite_schema m, pragma_table_info(m.name) c
            WHERE m.type = 'table'`,
        )
        .all(),
      Object.keys(declared),
    );
  try {
    check(columns, db);
  } finally {
    db.close();
    rmSync(folder, { recursive: true, force: true });
  }
}

let declared: Record<string, string[]>;
beforeAll(async () => {
  declared = await declaredTables();
});

describe('every table() declaration matches the migrated columns', () => {
  it('finds the declarations', () => {
    // The sessions, refunds, webhook and bank tables, and the rest: an empty list would match any schema.
    expect(Object.keys(declared).length).toBeGreaterThanOrEqual(20);
    expect(declared.sessions).toContain('business_id');
  });

  it('on SQLite, a file migrated from scratch', () => {
    withMigratedSqlite((columns) => expect(columns()).toEqual(declared));
  });

  it('the check sees a column renamed under its declaration', () => {
    withMigratedSqlite((columns, db) => {
      db.exec('ALTER TABLE sessions RENAME COLUMN business_id TO owner_id');
      expect(columns().sessions).toContain('owner_id');
      expect(columns()).not.toEqual(declared);
    });
  });

  describe.runIf(postgresAvailable)('on a real PostgreSQL', () => {
    const scratch = useScratchDatabase({ pools: { pool: { max: 1 } } });

    beforeAll(async () => {
      await migratePostgres(scratch.pool);
    });

    it('a database migrated from scratch', async () => {
      const { rows } = await scratch.pool.query<{ table: string; column: string }>(
        `SELECT table_name AS "table", column_name AS "column"
           FROM information_schema.columns WHERE table_schema = 'public'`,
      );
      expect(columnsOf(rows, Object.keys(declared))).toEqual(declared);
    });
  });
});

import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../support/child-process.ts';

// Issue 25: one place chooses the database (`db/backend.ts`, `openBackend`); above `db/` nothing names one. The
// service's modules outside `reference-server/src/db/` import no database driver and nothing of a store's own
// internals: PostgreSQL's pieces (`db/postgres/`) and SQLite's (its runner, write queue, WAL checkpointer).
// They see the store through `db/store.ts`, `db/repositories.ts`, the tables' modules and `db/backend.ts`.

const SOURCE = join(ROOT, 'reference-server', 'src');
const DB = join(SOURCE, 'db');

/** Imports only `db/` may make: a driver by package name, or a store's own module by path. */
const DRIVERS = ['pg', 'pg-pool', 'pg-native', 'better-sqlite3'];
const STORE_INTERNALS = [
  join(DB, 'postgres'),
  join(DB, 'sqlite-runner.ts'),
  join(DB, 'write-queue.ts'),
  join(DB, 'wal-checkpointer.ts'),
];

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return /\.tsx?$/.test(entry.name) && !entry.name.endsWith('.test.ts') ? [path] : [];
  });
}

/** Every module specifier a file imports or re-exports, static or dynamic. */
function specifiers(text: string): string[] {
  const found: string[] = [];
  for (const match of text.matchAll(/(?:\bfrom\s*|\bimport\s*\(\s*|\bimport\s+)['"]([^'"]+)['"]/g)) {
    if (match[1]) found.push(match[1]);
  }
  return found;
}

/** The specifiers `text` (the source of `file`) imports that reach a driver or a store's internals. */
function refusedImports(file: string, text: string): string[] {
  return specifiers(text).filter((specifier) => {
    if (!specifier.startsWith('.')) {
      return DRIVERS.some((name) => specifier === name || specifier.startsWith(`${name}/`));
    }
    const target = resolve(dirname(file), specifier);
    return STORE_INTERNALS.some((path) => target === path || target.startsWith(`${path}/`));
  });
}

describe('imports run down into db/, never back past it', () => {
  const outsideDb = sourceFiles(SOURCE).filter((file) => !file.startsWith(`${DB}/`));

  it('no module of the service outside db/ imports a database driver or a store’s internals', () => {
    expect(outsideDb.length).toBeGreaterThan(50);
    const refused = outsideDb.flatMap((file) =>
      refusedImports(file, readFileSync(file, 'utf8')).map(
        (specifier) => `${relative(ROOT, file)} → ${specifier}`,
      ),
    );
    expect(refused).toEqual([]);
  });

  it('the check sees each kind of import it refuses (a driver, db/postgres/, a SQLite internal)', () => {
    const samples = [
      ['service.ts', "import pg from 'pg';"],
      [
        'middleware/error-handler.ts',
        "import { databaseUnavailable } from '../db/postgres/postgres-write-queue.ts';",
      ],
      [
        'events/broadcaster.ts',
        "export { PostgresBroadcaster } from '../db/postgres/postgres-broadcaster.ts';",
      ],
      ['cli.ts', "const Database = await import('better-sqlite3');"],
      ['sessions/session-service.ts', "import type { WriteQueue } from '../db/write-queue.ts';"],
    ] as const;
    for (const [file, line] of samples)
      expect(refusedImports(join(SOURCE, file), line), line).toHaveLength(1);
    // What the service's modules do import from db/ is not refused.
    expect(
      refusedImports(join(SOURCE, 'service.ts'), "import { openBackend } from './db/backend.ts';"),
    ).toEqual([]);
  });
});

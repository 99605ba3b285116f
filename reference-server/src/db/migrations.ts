import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { Dialect } from './sql.ts';

/** The service's one migration history: `migrations/NNN_name.sqlite.sql` beside `NNN_name.postgres.sql`. */
export const MIGRATIONS_DIR = fileURLToPath(new URL('./migrations/', import.meta.url));

/**
 * One step of the history: its number and name (its identity in `schema_migrations`, on both stores) and its
 * SQL for each dialect. A step one store has nothing to do for is a file of comments saying why.
 */
export interface Migration {
  version: number;
  /** `NNN_name`, e.g. `001_core`. */
  name: string;
  sqlite: string;
  postgres: string;
}

/**
 * The steps of a folder (the service's own by default), in order. Every step needs both files, and a number is
 * used once: the number is the step's identity.
 *
 * @example
 * const throughTen = readMigrations().filter((migration) => migration.version <= 10);
 */
export function readMigrations(dir: string = MIGRATIONS_DIR): Migration[] {
  const folder = dir.endsWith('/') ? dir : `${dir}/`;
  const files = readdirSync(folder).filter((file) => /^\d{3}_[a-z0-9_]+\.(sqlite|postgres)\.sql$/.test(file));
  const steps = new Map<string, Partial<Record<Dialect, string>>>();
  for (const file of files) {
    const [name, dialect] = file.split('.') as [string, Dialect];
    const step = steps.get(name) ?? {};
    step[dialect] = readFileSync(folder + file, 'utf8');
    steps.set(name, step);
  }
  const migrations = [...steps.entries()]
    .sort(([a], [b]) => (a < b ? -1 : 1))
    .map(([name, step]) => {
      if (step.sqlite === undefined || step.postgres === undefined) {
        throw new Error(`migration ${name} needs both ${name}.sqlite.sql and ${name}.postgres.sql`);
      }
      return { version: Number(name.slice(0, 3)), name, sqlite: step.sqlite, postgres: step.postgres };
    });
  migrations.forEach((migration, index) => {
    if (index > 0 && migrations[index - 1]?.version === migration.version) {
      throw new Error(`two migrations are numbered ${migration.version}: rename one`);
    }
  });
  return migrations;
}

/**
 * The steps a SQLite file made before the one history already holds, by its `user_version`: SQLite numbered its
 * own files 001–009, and 007–009 are now 010–012 (the history took PostgreSQL's numbers, under which 007–009 are
 * PostgreSQL's own steps, nothing to do on SQLite).
 *
 * @example
 * legacySqliteSteps(9); // [1, 2, 3, 4, 5, 6, 10, 11, 12]
 */
export function legacySqliteSteps(userVersion: number): number[] {
  const renumbered: Record<number, number> = { 7: 10, 8: 11, 9: 12 };
  const steps: number[] = [];
  for (let version = 1; version <= Math.min(userVersion, 9); version++) {
    steps.push(renumbered[version] ?? version);
  }
  return steps;
}

/**
 * Preload (`node --import ./bench/support/count-statements.mjs …`) for `create-profile.ts`: counts every
 * better-sqlite3 statement the process runs, and every `exec` (BEGIN, COMMIT), by SQL text, and writes the
 * counts as JSON to `$COUNT_STATEMENTS_FILE` when the process exits. Profiling only: it wraps the prepared
 * statements' methods, which costs a little CPU of its own, so a run with it is not a CPU figure.
 */
import { writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';

const require = createRequire(new URL('../../reference-server/package.json', import.meta.url));
const Database = require('better-sqlite3');
const counts = new Map();
const count = (sql) => counts.set(sql, (counts.get(sql) ?? 0) + 1);
const prepare = Database.prototype.prepare;
Database.prototype.prepare = function (sql, ...rest) {
  const statement = prepare.call(this, sql, ...rest);
  for (const method of ['run', 'get', 'all', 'iterate']) {
    const original = statement[method];
    statement[method] = function (...args) {
      count(sql);
      return original.apply(this, args);
    };
  }
  return statement;
};
const exec = Database.prototype.exec;
Database.prototype.exec = function (sql) {
  count(sql);
  return exec.call(this, sql);
};
process.on('exit', () => {
  if (process.env.COUNT_STATEMENTS_FILE) {
    writeFileSync(process.env.COUNT_STATEMENTS_FILE, JSON.stringify(Object.fromEntries(counts)));
  }
});

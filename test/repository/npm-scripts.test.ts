import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../support/child-process.ts';

// npm runs a script through `sh` on Linux and macOS and through `cmd.exe` on Windows. The commands the README
// gives a developer must run under both: `exec`, `export`, a leading `VAR=value` or single quotes are `sh`
// only, and `npm start` with `exec node …` did not start on Windows at all (docs/decisions/local-development.md, "`npm start` stops when …").

const { scripts } = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
  scripts: Record<string, string>;
};

/** What `cmd.exe` cannot run in a command, by what it is. */
const SH_ONLY: ReadonlyArray<[string, RegExp]> = [
  ['a shell builtin', /(^|&&|\|\||;)\s*(exec|export|source|unset)\s/],
  ['a variable set before the command', /(^|&&|\|\||;)\s*[A-Za-z_][A-Za-z0-9_]*=\S/],
  ['single quotes', /'/],
];

describe('package.json', () => {
  it.each(['start', 'test', 'bench'])('`npm %s` is a command cmd.exe can run too', (name) => {
    const script = scripts[name];
    expect(script, `no "${name}" script`).toBeDefined();
    const found = SH_ONLY.filter(([, pattern]) => pattern.test(script as string)).map(([what]) => what);
    expect(found, script).toEqual([]);
  });
});

import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../support/child-process.ts';

// Issue 35: no module outside the tests is over 400 lines (style.md: aim for 50 to 300). A module that grows past
// it is split along a seam it already has (the SDK's senders, the sessions' account opening, the CLI's command
// groups): docs/decisions/code-layout.md.

const MAX_LINES = 400;

/** Where the modules live: every package's source, the plugin's PHP and TypeScript, the benches and scripts. */
const FOLDERS = [
  'sdk/src',
  'widget/src',
  'widget/react/src',
  'reference-server/src',
  'reference-server/bin',
  'woocommerce-plugin/src',
  'woocommerce-plugin/client',
  'woocommerce-plugin/bin',
  'examples',
  'bench',
  'scripts',
];
const MODULE = /\.(ts|tsx|js|mjs|cjs|php)$/;
const SKIPPED_FOLDERS = new Set(['node_modules', 'dist', 'build', 'vendor', 'tests', 'test', 'test-support']);

/**
 * Over the limit today, and being split on another branch of issue 35 (the OpenAPI document generator). An
 * entry here that is back under the limit fails the test below: take it out.
 */
const BEING_SPLIT = new Set(['reference-server/src/openapi/openapi-document.ts']);

function modules(dir: string): string[] {
  const folder = join(ROOT, dir);
  if (!existsSync(folder)) return [];
  return readdirSync(folder, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return SKIPPED_FOLDERS.has(entry.name) ? [] : modules(path);
    return MODULE.test(entry.name) && !/\.(test|spec)\.tsx?$/.test(entry.name) ? [path] : [];
  });
}

/** The file's lines; 0 for one that is gone (an exception split into other files). */
function lineCount(file: string): number {
  try {
    return readFileSync(join(ROOT, file), 'utf8').trimEnd().split('\n').length;
  } catch {
    return 0;
  }
}

describe(`no module outside the tests is over ${MAX_LINES} lines`, () => {
  const files = FOLDERS.flatMap(modules);

  it('finds the modules', () => {
    expect(files.length).toBeGreaterThan(300);
    expect(files).toContain('reference-server/src/sessions/session-service.ts');
  });

  it(`each is ${MAX_LINES} lines or fewer`, () => {
    const over = files
      .filter((file) => !BEING_SPLIT.has(file))
      .map((file) => ({ file, lines: lineCount(file) }))
      .filter(({ lines }) => lines > MAX_LINES);
    expect(over).toEqual([]);
  });

  it('an exception is one still over the limit', () => {
    expect([...BEING_SPLIT].filter((file) => lineCount(file) <= MAX_LINES)).toEqual([]);
  });
});

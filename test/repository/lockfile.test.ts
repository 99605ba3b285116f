import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../support/child-process.ts';

// `npm ci` installs what package-lock.json lists and nothing else. npm can write a lockfile that lists only the
// platform packages of the machine it ran on (npm/cli#4828): then `npm ci` on macOS or Windows skips rollup's
// native binary and vitest cannot start. A package's optional dependencies are how rollup, esbuild and the
// other native tools ship one binary per platform, so each must be in the lockfile.

interface LockedPackage {
  version?: string;
  optionalDependencies?: Record<string, string>;
}

const lockfile = JSON.parse(readFileSync(join(ROOT, 'package-lock.json'), 'utf8')) as {
  packages: Record<string, LockedPackage>;
};

/** Where npm finds `name` from the package at `from`: its own node_modules, then each one above it. */
function resolve(from: string, name: string): LockedPackage | undefined {
  let base = from;
  for (;;) {
    const found = lockfile.packages[`${base === '' ? '' : `${base}/`}node_modules/${name}`];
    if (found || base === '') return found;
    const parent = base.lastIndexOf('/node_modules/');
    base = parent === -1 ? '' : base.slice(0, parent);
  }
}

describe('package-lock.json', () => {
  it('lists every optional dependency of every package, so npm ci installs the native binaries on any platform', () => {
    const missing: string[] = [];
    for (const [path, locked] of Object.entries(lockfile.packages)) {
      for (const [name, wanted] of Object.entries(locked.optionalDependencies ?? {})) {
        const found = resolve(path, name);
        if (!found) missing.push(`${path || '(root)'} → ${name}@${wanted}`);
      }
    }
    expect(missing).toEqual([]);
    // The one that broke: rollup (under vitest) for an Apple-silicon Mac and for Windows.
    expect(resolve('node_modules/rollup', '@rollup/rollup-darwin-arm64')?.version).toBeDefined();
    expect(resolve('node_modules/rollup', '@rollup/rollup-win32-x64-msvc')?.version).toBeDefined();
  });
});

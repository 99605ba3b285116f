import { mkdirSync, mkdtempSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { needsBuild } from './build-if-stale.ts';

// What `npm start` decides to build, on real folders with real modification times.

const folders: string[] = [];
afterEach(() => {
  for (const folder of folders.splice(0)) rmSync(folder, { recursive: true, force: true });
});

function workspace(
  files: Record<string, number>,
  scripts: Record<string, string> = { build: 'tsup' },
): string {
  const dir = mkdtempSync(join(tmpdir(), 'servicepay-build-'));
  folders.push(dir);
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: 'w', scripts }));
  for (const [file, secondsAgo] of Object.entries(files)) {
    mkdirSync(join(dir, file, '..'), { recursive: true });
    writeFileSync(join(dir, file), 'x');
    const at = new Date(Date.now() - secondsAgo * 1000);
    utimesSync(join(dir, file), at, at);
  }
  return dir;
}

describe('needsBuild', () => {
  it('builds a workspace that was never built', () => {
    expect(needsBuild(workspace({ 'src/index.ts': 60 }))).toBe(true);
  });

  it('builds when a source or build script changed after the last build', () => {
    expect(needsBuild(workspace({ 'src/a/b.ts': 10, 'dist/index.js': 60 }))).toBe(true);
    expect(needsBuild(workspace({ 'src/a.ts': 120, 'scripts/build.ts': 10, 'dist/index.js': 60 }))).toBe(
      true,
    );
  });

  it('leaves a fresh build alone, and a workspace without a build script', () => {
    expect(needsBuild(workspace({ 'src/a.ts': 120, 'dist/index.js': 60 }))).toBe(false);
    expect(needsBuild(workspace({ 'src/a.ts': 10 }, {}))).toBe(false);
  });
});

import { existsSync, mkdirSync, mkdtempSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { buildIfStale, needsBuild } from './build-if-stale.ts';

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

describe('buildIfStale', () => {
  it('runs the workspace build through npm once, and not again while the build is fresh', () => {
    const root = mkdtempSync(join(tmpdir(), 'servicepay-root-'));
    folders.push(root);
    writeFileSync(
      join(root, 'package.json'),
      JSON.stringify({ name: 'root', private: true, workspaces: ['w'] }),
    );
    mkdirSync(join(root, 'w', 'src'), { recursive: true });
    // The package name differs from the folder: npm is asked for the package, as the real workspaces are.
    const build =
      "node -e \"require('fs').mkdirSync('dist',{recursive:true});require('fs').writeFileSync('dist/x','built')\"";
    writeFileSync(join(root, 'w', 'package.json'), JSON.stringify({ name: '@test/w', scripts: { build } }));
    writeFileSync(join(root, 'w', 'src', 'index.ts'), 'export {};');
    const lastWeek = new Date(Date.now() - 7 * 24 * 3600 * 1000);
    utimesSync(join(root, 'w', 'src', 'index.ts'), lastWeek, lastWeek);
    const logged: string[] = [];

    expect(buildIfStale(root, ['w'], (line) => logged.push(line))).toEqual(['w']);
    expect(existsSync(join(root, 'w', 'dist', 'x'))).toBe(true);
    expect(logged).toEqual(['Building w…']);

    expect(buildIfStale(root, ['w'], (line) => logged.push(line))).toEqual([]);
    expect(logged).toHaveLength(1);
  });
});

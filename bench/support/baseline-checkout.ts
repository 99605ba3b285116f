/**
 * An earlier build of this repository beside it, to measure a cut or a regression against in the same run
 * (issue 38: the keyed create against `3e090d8`, main on 27 November). The commit's files are extracted with
 * `git archive` into the system's temp folder (no worktree is registered in the repository), once per commit,
 * and this checkout's `node_modules` folders are copied in as hard links (`cp -al`; a plain copy where the temp
 * folder is on another file system). Hard links, not symlinks: the workspaces' own links in `node_modules`
 * (`@servicepay/node` → `../../sdk`) are relative, so the earlier build runs its own SDK, not this one's. Its
 * packages are this checkout's: a build whose lockfile differs runs on today's dependencies (said in the output
 * by the caller, which names the commit).
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, renameSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

/** Every `node_modules` of this checkout that is not inside another (the root's and each workspace's). */
function nodeModulesFolders(folder: string, depth = 0): string[] {
  const found: string[] = [];
  for (const entry of readdirSync(folder, { withFileTypes: true })) {
    if (!entry.isDirectory() || entry.name.startsWith('.')) continue;
    const path = join(folder, entry.name);
    if (entry.name === 'node_modules') found.push(path);
    else if (depth < 2) found.push(...nodeModulesFolders(path, depth + 1));
  }
  return found;
}

/**
 * The folder of `commit`'s files, ready to run its bench servers (`startBenchServer(kind, args, [], folder)`);
 * `undefined` with the reason when this clone does not have the commit (a shallow clone).
 *
 * @example
 * const base = baselineCheckout('3e090d8');
 * if ('folder' in base) await startBenchServer('servicepay', [], [], base.folder);
 */
export function baselineCheckout(commit: string): { folder: string; commit: string } | { missing: string } {
  let full: string;
  try {
    full = execFileSync('git', ['rev-parse', '--verify', '--quiet', `${commit}^{commit}`], {
      cwd: ROOT,
      encoding: 'utf8',
    }).trim();
  } catch {
    return { missing: `commit ${commit} is not in this clone (a shallow clone? git fetch --unshallow)` };
  }
  const folder = join(tmpdir(), `servicepay-bench-${full.slice(0, 12)}`);
  if (existsSync(join(folder, '.ready'))) return { folder, commit: full.slice(0, 12) };
  // Made under another name and renamed when whole, so an interrupted run leaves nothing half made behind.
  const making = `${folder}.making-${process.pid}`;
  rmSync(making, { recursive: true, force: true });
  mkdirSync(making, { recursive: true });
  execFileSync('sh', ['-c', `git archive --format=tar "$0" | tar -x -C "$1"`, full, making], { cwd: ROOT });
  for (const source of nodeModulesFolders(ROOT)) {
    const target = join(making, relative(ROOT, source));
    mkdirSync(dirname(target), { recursive: true });
    try {
      execFileSync('cp', ['-al', source, target], { stdio: 'ignore' });
    } catch {
      rmSync(target, { recursive: true, force: true });
      execFileSync('cp', ['-a', source, target]);
    }
  }
  execFileSync('touch', [join(making, '.ready')]);
  rmSync(folder, { recursive: true, force: true });
  renameSync(making, folder);
  return { folder, commit: full.slice(0, 12) };
}

import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';

/** The newest modification time of any file under `path` (0 if it does not exist), `node_modules` aside. */
function newest(path: string): number {
  if (!existsSync(path)) return 0;
  const stat = statSync(path);
  if (!stat.isDirectory()) return stat.mtimeMs;
  let latest = 0;
  for (const entry of readdirSync(path)) {
    if (entry === 'node_modules') continue;
    latest = Math.max(latest, newest(join(path, entry)));
  }
  return latest;
}

/**
 * Whether a workspace needs its build: it has a `build` script, and its `dist/` is missing or older than its
 * `src/` or `scripts/`.
 *
 * @example
 * import { needsBuild } from './build-if-stale.ts';
 * needsBuild('sdk'); // false right after `npm run build -w sdk`
 */
export function needsBuild(workspaceDir: string): boolean {
  const manifest = JSON.parse(readFileSync(join(workspaceDir, 'package.json'), 'utf8')) as {
    scripts?: Record<string, string>;
  };
  if (!manifest.scripts?.build) return false;
  const output = newest(join(workspaceDir, 'dist'));
  if (output === 0) return true;
  return Math.max(newest(join(workspaceDir, 'src')), newest(join(workspaceDir, 'scripts'))) > output;
}

/**
 * Builds each workspace that {@link needsBuild}, quietly; on a failure prints the build's output and throws.
 * Returns the workspaces it built.
 *
 * @example
 * import { buildIfStale } from './build-if-stale.ts';
 * buildIfStale(process.cwd(), ['sdk', 'widget'], (line) => console.log(line));
 */
export function buildIfStale(root: string, workspaces: string[], log: (line: string) => void): string[] {
  const built: string[] = [];
  for (const workspace of workspaces) {
    const dir = join(root, workspace);
    if (!needsBuild(dir)) continue;
    const { name } = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as { name: string };
    log(`Building ${workspace}…`);
    try {
      // By package name: `--workspace widget` would also match the nested widget/react workspace.
      execFileSync('npm', ['run', 'build', '--workspace', name], { cwd: root, stdio: 'pipe' });
    } catch (error) {
      const { stdout, stderr } = error as { stdout?: Buffer; stderr?: Buffer };
      console.error(`${stdout?.toString() ?? ''}${stderr?.toString() ?? ''}`);
      throw new Error(`building ${workspace} failed (above); fix it and run npm start again`);
    }
    built.push(workspace);
  }
  return built;
}

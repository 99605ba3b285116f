// `npm ci` and `npm install` run this after installing: the SDK is built so the workspaces that import it
// work at once, and the reference server so that `npx servicepay-server` (which runs its compiled build) does. A dry run (`npm ci --dry-run`) installs nothing, so there is
// nothing to build it with: skip it rather than fail on a missing tsup.
import { execFileSync } from 'node:child_process';

if (process.env.npm_config_dry_run !== 'true') {
  execFileSync('npm', ['run', 'build', '--workspace', 'sdk'], { stdio: 'inherit' });
  execFileSync('npm', ['run', 'build', '--workspace', 'reference-server'], { stdio: 'inherit' });
}

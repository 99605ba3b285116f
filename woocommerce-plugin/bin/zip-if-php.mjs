#!/usr/bin/env node
/**
 * The last step of `npm run build`: packs servicepay-woocommerce.zip with `php bin/build-zip.php` when PHP is
 * installed, and says why not otherwise (the scripts in build/ are still built). In Node rather than the shell,
 * so the build runs the same from any shell npm uses, Windows' included.
 */
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';

const zip = spawnSync('php', [join(import.meta.dirname, 'build-zip.php')], { stdio: 'inherit' });
if (zip.error && 'code' in zip.error && zip.error.code === 'ENOENT') {
  console.log('servicepay-woocommerce.zip not built: php is not installed');
} else if (zip.error) {
  throw zip.error;
} else {
  process.exit(zip.status ?? 1);
}

/**
 * `npm run bench`: runs every benchmark in this folder, one process each, one after another (they measure
 * throughput, so they must not share the CPU). `npm run bench -- session` runs those whose name contains it.
 */
import { spawnSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const folder = fileURLToPath(new URL('.', import.meta.url));
const filters = process.argv.slice(2);
const benches = readdirSync(folder)
  .filter((name) => name.endsWith('.ts') && name !== 'run.ts')
  .filter((name) => filters.length === 0 || filters.some((filter) => name.includes(filter)))
  .sort();

let failed = 0;
for (const name of benches) {
  console.log(`\n=== ${name} ===`);
  const result = spawnSync(process.execPath, ['--import', 'tsx', `${folder}${name}`], { stdio: 'inherit' });
  if (result.status !== 0) {
    failed++;
    console.log(`${name} exited with ${result.status ?? result.signal}`);
  }
}
process.exitCode = failed > 0 ? 1 : 0;

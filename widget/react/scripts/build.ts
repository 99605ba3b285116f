/**
 * Builds `@servicepay/react` into `dist/`: `index.js` (ESM, React left to the app) and the `.d.ts` files.
 *
 * @example
 * // npm run build -w @servicepay/react
 */
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const root = fileURLToPath(new URL('..', import.meta.url));
const require = createRequire(import.meta.url);

await build({
  entryPoints: [join(root, 'src/index.ts')],
  outfile: join(root, 'dist/index.js'),
  bundle: true,
  format: 'esm',
  platform: 'neutral',
  target: ['es2020'],
  jsx: 'automatic',
  external: ['react', 'react/jsx-runtime', 'react-dom'],
  tsconfig: join(root, '../tsconfig.json'),
});
execFileSync(
  process.execPath,
  [require.resolve('typescript/bin/tsc'), '-p', join(root, 'tsconfig.build.json')],
  {
    stdio: 'inherit',
  },
);
// Published declarations import `./x.js`, which every TypeScript resolution mode understands.
for (const name of readdirSync(join(root, 'dist')).filter((file) => file.endsWith('.d.ts'))) {
  const path = join(root, 'dist', name);
  writeFileSync(path, readFileSync(path, 'utf8').replace(/from '(\.\/[^']+)\.tsx?'/g, "from '$1.js'"));
}

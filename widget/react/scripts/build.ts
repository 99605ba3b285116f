/**
 * Builds `@servicepay/react` into `dist/`: `index.js` (ESM, React left to the app) and the `.d.ts` files.
 *
 * @example
 * // npm run build -w @servicepay/react
 */
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
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
// tsc's root is the widget folder (the loader's messages live in the widget's one texts module), so it writes
// `react/src/*.d.ts` under `dist/.types/`; only those are published, as `dist/*.d.ts`. They import `./x.js`,
// which every TypeScript resolution mode understands.
const types = join(root, 'dist/.types/react/src');
for (const name of readdirSync(types).filter((file) => file.endsWith('.d.ts'))) {
  const declaration = readFileSync(join(types, name), 'utf8');
  if (/from '\.\.\//.test(declaration)) throw new Error(`${name} refers outside @servicepay/react`);
  writeFileSync(join(root, 'dist', name), declaration.replace(/from '(\.\/[^']+)\.tsx?'/g, "from '$1.js'"));
}
rmSync(join(root, 'dist/.types'), { recursive: true, force: true });

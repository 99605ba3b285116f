#!/usr/bin/env node
// The compiled service (`npm run build -w @servicepay/reference-server`, run by `npm ci` and `npm run build`):
// nothing is compiled at start. `npm start` and the tests run the TypeScript source through tsx instead.
import { existsSync } from 'node:fs';

const compiled = new URL('../dist/cli.js', import.meta.url);
if (!existsSync(compiled)) {
  console.error(
    'servicepay-server: the compiled server is missing (reference-server/dist/cli.js). Build it: npm run build -w @servicepay/reference-server',
  );
  process.exit(1);
}
const { main } = await import(compiled.href);
const code = await main(process.argv.slice(2));
// `start` keeps the process alive with its servers; anything else ends here with its code.
if (code !== 0) process.exit(code);

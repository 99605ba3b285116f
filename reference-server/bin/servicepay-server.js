#!/usr/bin/env node
// The service runs from its TypeScript source through tsx, so `npx servicepay-server` works right after `npm ci`.
import { register } from 'tsx/esm/api';

register();
const { main } = await import('../src/cli.ts');
const code = await main(process.argv.slice(2));
// `start` keeps the process alive with its servers; anything else ends here with its code.
if (code !== 0) process.exit(code);

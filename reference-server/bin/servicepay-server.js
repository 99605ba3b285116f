#!/usr/bin/env node
// The service runs from its TypeScript source through tsx, so `npx servicepay-server` works right after `npm ci`.
import { register } from 'tsx/esm/api';

register();
await import('../src/cli.ts');

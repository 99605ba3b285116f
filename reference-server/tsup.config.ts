import { cpSync } from 'node:fs';
import { defineConfig } from 'tsup';

// The compiled server (issue 28): `servicepay-server` runs `dist/cli.js`, one ES module with the service's own
// code bundled and its dependencies (express, pg, better-sqlite3, the SDK...) imported from node_modules, so
// nothing is compiled at start. The files the code reads beside itself at run time are copied where its
// `import.meta.url` then points: the migrations (`db/migrations.ts`) and the portal's assets.
export default defineConfig({
  entry: { cli: 'src/cli.ts' },
  format: ['esm'],
  platform: 'node',
  target: 'node22',
  clean: true,
  sourcemap: true,
  // Error class names survive: a log line shows `constructor.name`.
  keepNames: true,
  onSuccess: async () => {
    cpSync('src/db/migrations', 'dist/migrations', { recursive: true });
    cpSync('src/portal/assets', 'dist/assets', { recursive: true });
  },
});

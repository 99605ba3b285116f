import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';
import SummaryReporter from './test/support/summary-reporter.ts';

const fromRoot = (path: string) => fileURLToPath(new URL(path, import.meta.url));

export default defineConfig({
  resolve: {
    // Tests run the packages from source, so a contract change is seen without a rebuild.
    alias: {
      '@servicepay/node/protocol': fromRoot('./sdk/src/protocol/index.ts'),
      '@servicepay/node': fromRoot('./sdk/src/index.ts'),
    },
  },
  test: {
    include: ['**/*.test.ts'],
    exclude: ['**/node_modules/**', '**/dist/**'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    reporters: ['default', new SummaryReporter()],
    setupFiles: [fromRoot('./test/support/fail-on-console.ts')],
  },
});

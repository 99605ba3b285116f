import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';
import { postgresAvailable, reportIfPostgresMissing } from './test/support/postgres.ts';
import SummaryReporter from './test/support/summary-reporter.ts';

const fromRoot = (path: string) => fileURLToPath(new URL(path, import.meta.url));

const shared = {
  resolve: {
    // Tests run the packages from source, so a contract change is seen without a rebuild.
    alias: {
      '@servicepay/node/protocol': fromRoot('./sdk/src/protocol/index.ts'),
      '@servicepay/node': fromRoot('./sdk/src/index.ts'),
    },
  },
  test: {
    exclude: ['**/node_modules/**', '**/dist/**'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    setupFiles: [fromRoot('./test/support/fail-on-console.ts')],
  },
};

// Issue 13: the API, reliability and contract suites, and the service's own push, webhook and bank suites, run
// a second time with the service on PostgreSQL (one scratch cluster for the project, a database per server). A file named `*-on-sqlite.test.ts` checks a
// promise of the SQLite store alone. Where PostgreSQL's binaries are missing the project is left out, said in
// one line (the same line the test/postgres files would print).
const onPostgres = {
  ...shared,
  test: {
    ...shared.test,
    name: 'postgres',
    include: [
      'test/api/**/*.test.ts',
      'test/reliability/**/*.test.ts',
      'test/contract/**/*.test.ts',
      'reference-server/src/events/push-streams.test.ts',
      'reference-server/src/events/webhook-worker.test.ts',
      'reference-server/src/routes/session-events.test.ts',
      'reference-server/src/routes/webhook-endpoints.test.ts',
      'reference-server/src/bank/simulated-bank.test.ts',
    ],
    exclude: [...shared.test.exclude, '**/*-on-sqlite.test.ts'],
    env: { SERVICEPAY_TEST_STORE: 'postgres' },
    globalSetup: [fromRoot('./test/support/postgres-global-setup.ts')],
  },
};
if (!postgresAvailable) reportIfPostgresMissing(process.pid);

// Issue 27: the packaging suites build the packages and the release (tsup, npm pack, the release script) in a
// ~30 s `beforeAll` each. In a project of their own the quick loop (`--project sqlite`, `vitest run sdk`) does not
// wait on them, they run alone with `--project packaging`, and `npm test` runs every project.
const PACKAGING_TESTS = [
  'sdk/test/package.test.ts',
  'test/repository/release.test.ts',
  'test/repository/fresh-clone.test.ts',
];
const packaging = { ...shared, test: { ...shared.test, name: 'packaging', include: PACKAGING_TESTS } };

export default defineConfig({
  test: {
    // Two files at a time, whatever the core count. vitest's default is one fewer than the cores, which on the
    // 2-core machines CI and development run on is one file at a time, 15 minutes end to end; most of the long
    // files wait on Chromium, PHP or a database rather than on the CPU (docs/decisions/testing.md, "The suite's time").
    maxWorkers: 2,
    reporters: ['default', new SummaryReporter()],
    projects: [
      {
        ...shared,
        test: {
          ...shared.test,
          name: 'sqlite',
          include: ['**/*.test.ts'],
          exclude: [...shared.test.exclude, ...PACKAGING_TESTS],
        },
      },
      packaging,
      ...(postgresAvailable ? [onPostgres] : []),
    ],
  },
});

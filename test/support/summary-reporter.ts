import type { Reporter, TestModule } from 'vitest/node';

/**
 * Ends the run with the plain line `N passed, N failed, N skipped` that CI reads, after vitest's own summary.
 */
export default class SummaryReporter implements Reporter {
  onTestRunEnd(testModules: ReadonlyArray<TestModule>): void {
    const counts = { passed: 0, failed: 0, skipped: 0 };
    for (const testModule of testModules) {
      for (const test of testModule.children.allTests()) {
        const state = test.result().state;
        if (state === 'passed') counts.passed++;
        else if (state === 'failed') counts.failed++;
        else counts.skipped++;
      }
      // A file that failed to load has no tests, and one whose hook failed may have passed them all: either
      // way the file failed, and the count must say so.
      const anyFailed = [...testModule.children.allTests()].some((test) => test.result().state === 'failed');
      if (testModule.state() === 'failed' && !anyFailed) counts.failed++;
    }
    process.stdout.write(`\n${counts.passed} passed, ${counts.failed} failed, ${counts.skipped} skipped\n`);
  }
}

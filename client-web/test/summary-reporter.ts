// Prints one plain closing line, `vitest: N passed, N failed`, after a run so
// that tools that read test summaries (CI) find the counts whatever the runner.
import type { Reporter, TestModule } from 'vitest/node';

/** Counts finished test cases and prints the plain summary line at the end of the run. */
export default class SummaryReporter implements Reporter {
  private line = '';

  onTestRunEnd(modules: ReadonlyArray<TestModule>, errors: ReadonlyArray<unknown>): void {
    let passed = 0;
    let failed = 0;
    let skipped = 0;
    for (const module of modules) {
      for (const test of module.children.allTests()) {
        const state = test.result().state;
        if (state === 'passed') passed++;
        else if (state === 'failed') failed++;
        else skipped++;
      }
      // A file that failed to load (or a failing hook) has no failed test case; count it.
      if (module.state() === 'failed' && ![...module.children.allTests('failed')].length) failed++;
    }
    failed += errors.length;
    const tail = skipped ? `, ${skipped} skipped` : '';
    this.line = `vitest: ${passed} passed, ${failed} failed${tail}`;
  }

  /** Runs after every reporter's end-of-run output, so the line closes the log. */
  onFinished(): void {
    if (this.line) process.stdout.write(`\n${this.line}\n`);
  }
}

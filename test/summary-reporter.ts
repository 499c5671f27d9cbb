import type { Reporter, TestModule } from "vitest/node";

/**
 * Ends the run with one plain line, `tests: N passed, N failed, N skipped`, that any CI log
 * reader understands (vitest's own summary is styled for terminals), after the slowest files with
 * their durations, to keep test/file-durations.json (the heavy-first order) and the suite's time honest.
 */
export default class SummaryReporter implements Reporter {
  onTestRunEnd(testModules: ReadonlyArray<TestModule>): void {
    const counts = { passed: 0, failed: 0, skipped: 0 };
    for (const module of testModules) {
      let failedTests = 0;
      for (const test of module.children.allTests()) {
        const state = test.result().state;
        if (state === "passed") counts.passed++;
        else if (state === "failed") failedTests++;
        else counts.skipped++;
      }
      // A file that failed to load or whose hooks failed counts as one failure of its own.
      counts.failed += module.state() === "failed" && failedTests === 0 ? 1 : failedTests;
    }
    const slowest = [...testModules]
      .map((m) => ({ file: m.relativeModuleId, seconds: m.diagnostic().duration / 1000 }))
      .sort((a, b) => b.seconds - a.seconds)
      .slice(0, 25);
    process.stdout.write(
      `\nslowest files:\n${slowest.map((f) => `  ${f.seconds.toFixed(0).padStart(5)} s  ${f.file}`).join("\n")}\n`,
    );
    process.stdout.write(`\ntests: ${counts.passed} passed, ${counts.failed} failed, ${counts.skipped} skipped\n`);
  }
}

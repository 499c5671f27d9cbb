import { readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { BaseSequencer, type TestSpecification } from "vitest/node";

/**
 * Starts the slowest test files first, longest first, so that the run does not end with one long
 * file alone on a worker while the other sits idle. A fresh clone (CI) has no vitest cache, and
 * vitest's own order then leaves the files in glob order: test/images.test.ts and
 * test/release-compat.test.ts, the two longest, started last. test/file-durations.json records
 * the slow files' durations; the files it does not name follow in vitest's own order (cached
 * durations when there are some, larger files first otherwise).
 */
export default class HeavyFirstSequencer extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const sorted = await super.sort(files);
    const { seconds } = JSON.parse(readFileSync(join(import.meta.dirname, "file-durations.json"), "utf8")) as {
      seconds: Record<string, number>;
    };
    const recorded = (spec: TestSpecification) =>
      seconds[relative(this.ctx.config.root, spec.moduleId).split("\\").join("/")] ?? 0;
    // Array.prototype.sort is stable: unrecorded files (0) keep vitest's order after the recorded ones.
    return sorted.sort((a, b) => recorded(b) - recorded(a));
  }
}

import { defineConfig } from "vitest/config";
import HeavyFirstSequencer from "./test/heavy-first-sequencer.js";

export default defineConfig({
  test: {
    include: ["{services,packages,proto,deploy,bench}/**/*.test.ts", "test/**/*.test.ts"],
    exclude: ["**/node_modules/**", "**/dist/**"],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    // End-to-end files start several processes each; two at a time fit a 2-core machine.
    maxWorkers: 2,
    // The slowest files first (test/file-durations.json), so the run does not end on one of them alone.
    sequence: { sequencer: HeavyFirstSequencer },
    reporters: ["default", "./test/summary-reporter.ts"],
  },
});

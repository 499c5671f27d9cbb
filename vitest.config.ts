import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["{services,packages,proto,deploy,bench}/**/*.test.ts", "test/**/*.test.ts"],
    exclude: ["**/node_modules/**", "**/dist/**"],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    // End-to-end files start several processes each; two at a time fit a 2-core machine.
    maxWorkers: 2,
    reporters: ["default", "./test/summary-reporter.ts"],
  },
});

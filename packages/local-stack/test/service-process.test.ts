import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { startServiceProcess } from "../src/service-process.js";

const dir = mkdtempSync(join(tmpdir(), "service-process-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("startServiceProcess", () => {
  it("starts the entry point with the Node options given as execArgv, which NODE_OPTIONS would refuse", async () => {
    const entry = join(dir, "main.mjs");
    writeFileSync(entry, `console.log(JSON.stringify({ msg: "listening", execArgv: process.execArgv }));\n`);
    const started = await startServiceProcess({
      name: "probe",
      entry,
      env: {},
      execArgv: ["--perf-prof-path=/tmp", "--no-flush-bytecode"],
    });
    try {
      expect((started.listening as { execArgv?: string[] }).execArgv).toEqual([
        "--perf-prof-path=/tmp",
        "--no-flush-bytecode",
      ]);
    } finally {
      await started.stop();
    }
  });
});

/**
 * test/run-all.js (`npm test` after `tsc -b`) run with stand-ins for `npm` and `vitest` first on
 * PATH: the three run side by side, a check's output is printed whole, and a failure of any one
 * of them fails the whole with its name, only after the others have ended.
 */
import { execFile } from "node:child_process";
import { chmod, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

const script = join(import.meta.dirname, "run-all.js");
let bin: string;

beforeAll(async () => {
  bin = await mkdtemp(join(tmpdir(), "run-all-"));
  // `npm run -s <name>`: prints a line to each stream, sleeps SLEEP s, exits with FAIL_<name>'s code
  // (0 when unset); `vitest` the same with VITEST_SLEEP.
  await writeFile(
    join(bin, "npm"),
    `#!/bin/sh
name="$3"
echo "$name line 1"
echo "$name to stderr" >&2
sleep "\${SLEEP:-0}"
eval "code=\\\${FAIL_$name:-0}"
exit "$code"
`,
  );
  await writeFile(
    join(bin, "vitest"),
    `#!/bin/sh
echo "vitest started"
sleep "\${VITEST_SLEEP:-0}"
echo "vitest ended"
exit "\${FAIL_vitest:-0}"
`,
  );
  await chmod(join(bin, "npm"), 0o755);
  await chmod(join(bin, "vitest"), 0o755);
});

afterAll(async () => {
  await rm(bin, { recursive: true, force: true });
});

async function runAll(env: Record<string, string>): Promise<{ code: number; output: string; seconds: number }> {
  const started = Date.now();
  try {
    const { stdout } = await promisify(execFile)(process.execPath, [script], {
      env: { ...process.env, PATH: `${bin}:${process.env.PATH}`, ...env },
    });
    return { code: 0, output: stdout, seconds: (Date.now() - started) / 1000 };
  } catch (error) {
    const failed = error as { code: number; stdout: string };
    return { code: failed.code, output: failed.stdout, seconds: (Date.now() - started) / 1000 };
  }
}

describe("npm test's runner", () => {
  it("runs the lint, the dependency rules and vitest side by side and passes when all pass", async () => {
    const { code, output, seconds } = await runAll({ SLEEP: "2", VITEST_SLEEP: "4" });
    expect(code).toBe(0);
    // One after the other would take 8 s; side by side, vitest's 4 s and the start-up.
    expect(seconds).toBeLessThan(6.5);
    // A check's block: its verdict, then its stdout and stderr (in whichever order they came), then "---".
    for (const name of ["lint", "deps"]) {
      const block = new RegExp(`--- npm run -s ${name}: passed in \\d+ s\n([^]*?)\n---\n`).exec(output)?.[1];
      expect(block?.split("\n").sort()).toEqual([`${name} line 1`, `${name} to stderr`]);
    }
    // Each check's block came whole while vitest ran (vitest's own lines stream as they come).
    const started = output.indexOf("vitest started");
    const lint = output.indexOf("--- npm run -s lint");
    const ended = output.indexOf("vitest ended");
    expect(started).toBeGreaterThanOrEqual(0);
    expect(lint).toBeGreaterThan(started);
    expect(ended).toBeGreaterThan(lint);
    expect(output).not.toContain("failed:");
  });

  it("fails when the lint fails, naming it, after vitest has ended", async () => {
    const { code, output } = await runAll({ FAIL_lint: "2" });
    expect(code).toBe(1);
    expect(output).toContain("--- npm run -s lint: FAILED (exit 2)");
    expect(output).toContain("vitest ended");
    expect(output.trimEnd().split("\n").at(-1)).toBe("failed: npm run -s lint");
  });

  it("fails when vitest or the dependency rules fail, naming each", async () => {
    const { code, output } = await runAll({ FAIL_vitest: "1", FAIL_deps: "3" });
    expect(code).toBe(1);
    expect(output).toContain("--- npm run -s deps: FAILED (exit 3)");
    expect(output.trimEnd().split("\n").at(-1)).toBe("failed: npm run -s deps, vitest run");
  });
});

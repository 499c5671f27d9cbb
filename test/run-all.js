// `npm test` after `tsc -b`: the lint (ESLint with types, Prettier, buf lint), the dependency
// rules and vitest side by side instead of one after the other, which saved about a minute of a
// fresh clone's run (docs/operations.md, "The test suite's time"). Vitest's output streams as it
// comes; each check's output is printed whole when it ends, so lines never interleave. Exits 1
// when any of the three failed, after all three have ended, and names the ones that failed last.
import { Buffer } from "node:buffer";
import { spawn } from "node:child_process";
import process from "node:process";

/** Runs `command`; resolves with its exit code (1 for a signal) and, when `buffered`, its output. */
function run(command, args, buffered) {
  return new Promise((resolve) => {
    const started = Date.now();
    const child = spawn(command, args, { stdio: buffered ? ["ignore", "pipe", "pipe"] : "inherit" });
    const chunks = [];
    if (buffered) {
      child.stdout.on("data", (chunk) => chunks.push(chunk));
      child.stderr.on("data", (chunk) => chunks.push(chunk));
    }
    child.on("error", (error) => chunks.push(Buffer.from(`${String(error)}\n`)));
    child.on("close", (code) =>
      resolve({ code: code ?? 1, output: Buffer.concat(chunks).toString(), seconds: (Date.now() - started) / 1000 }),
    );
  });
}

const checks = [
  ["npm run -s lint", "npm", ["run", "-s", "lint"]],
  ["npm run -s deps", "npm", ["run", "-s", "deps"]],
];

const failed = [];
const finished = checks.map(([name, command, args]) =>
  run(command, args, true).then(({ code, output, seconds }) => {
    const verdict = code === 0 ? "passed" : `FAILED (exit ${code})`;
    process.stdout.write(
      `\n--- ${name}: ${verdict} in ${seconds.toFixed(0)} s\n${output}${output.endsWith("\n") ? "" : "\n"}---\n`,
    );
    if (code !== 0) failed.push(name);
  }),
);
const vitest = await run("vitest", ["run"], false);
await Promise.all(finished);
if (vitest.code !== 0) failed.push("vitest run");
if (failed.length > 0) {
  process.stdout.write(`\nfailed: ${failed.join(", ")}\n`);
  process.exit(1);
}

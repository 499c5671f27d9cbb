/**
 * Same-run A/B of one benchmark: this checkout (B) against a build of an older commit (A).
 *
 *   npm run bench:ab -- <notify|webhooks> <ref> [rounds]
 *
 * The ref is checked out once under .data/ab/<sha> (a detached worktree, installed with `npm ci`
 * and built with the project's own tsc), then the benchmark runs from each checkout in turn,
 * `rounds` times each (default 2), alternating which goes first (A B, B A, ...) so a drift of the
 * shared machine during the run weighs on both alike. Each run is the benchmark exactly as its
 * npm script runs it (its own floors included); every run's log is kept beside the checkout.
 * Printed: each run's figures and, per side, their median, with B / A. The benchmark's own ratios
 * to its floor are the figures to compare: they are measured in the same run as the floor.
 */
import { execFileSync, spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";

const repo = join(import.meta.dirname, "..", "..");

type Summary = Record<string, unknown>;
type Figures = Record<string, (summary: Summary) => number>;

const at = (summary: Summary, path: string): number => {
  let value: unknown = summary;
  for (const key of path.split(".")) value = (value as Record<string, unknown> | undefined)?.[key];
  if (typeof value !== "number") throw new Error(`the summary has no number at ${path}`);
  return value;
};
const mean = (values: number[]) => values.reduce((s, v) => s + v, 0) / values.length;
const runsOf = (summary: Summary, path: string): Summary[] => {
  let value: unknown = summary;
  for (const key of path.split(".")) value = (value as Record<string, unknown> | undefined)?.[key];
  if (!Array.isArray(value)) throw new Error(`the summary has no list at ${path}`);
  return value as Summary[];
};

/** The figures compared, per benchmark: higher is better for rates and ratios, lower for latencies. */
const figures: Record<string, Figures> = {
  notify: {
    "sends/s": (s) => at(s, "notify.sendsPerSecond"),
    "floor (c) sends/s": (s) => at(s, "floorC.sendsPerSecond"),
    "notify / floor (c)": (s) => at(s, "notify.sendsPerSecond") / at(s, "floorC.sendsPerSecond"),
    "open-loop p50 ms": (s) => at(s, "openLoop.p50Ms"),
    "open-loop p99 ms": (s) => at(s, "openLoop.p99Ms"),
    "floor (c) open-loop p99 ms": (s) => at(s, "openLoopFloorC.p99Ms"),
  },
  webhooks: {
    "pipeline deliveries/s": (s) => mean(runsOf(s, "pipeline").map((r) => at(r, "deliveriesPerSecond"))),
    "floor deliveries/s": (s) => mean(runsOf(s, "floor").map((r) => at(r, "deliveriesPerSecond"))),
    "pipeline / floor": (s) => at(s, "ratio"),
    "open-loop p50 ms": (s) => at(s, "openLoop.pipeline.p50Ms"),
    "open-loop p99 ms": (s) => at(s, "openLoop.pipeline.p99Ms"),
    "floor open-loop p99 ms": (s) => at(s, "openLoop.floor.p99Ms"),
  },
};

function run(command: string, args: string[], cwd: string): void {
  execFileSync(command, args, { cwd, stdio: ["ignore", "inherit", "inherit"] });
}

/** The ref's checkout, installed and built (once). */
function checkoutOf(ref: string): { dir: string; sha: string } {
  const sha = execFileSync("git", ["rev-parse", "--verify", `${ref}^{commit}`], { cwd: repo, encoding: "utf8" }).trim();
  const dir = join(repo, ".data", "ab", sha);
  if (!existsSync(join(dir, "bench", "dist"))) {
    if (!existsSync(dir)) run("git", ["worktree", "add", "--detach", dir, sha], repo);
    run("npm", ["ci", "--no-audit", "--no-fund"], dir);
    run("npx", ["--no-install", "tsc", "-b"], dir);
  }
  return { dir, sha };
}

/** One run of the benchmark from `dir`; its summary is the last line that is a JSON object. */
async function benchOnce(dir: string, bench: string, log: string): Promise<Summary> {
  const child = spawn(process.execPath, [join("bench", "dist", `${bench}.js`)], {
    cwd: dir,
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  child.stdout.on("data", (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on("data", (chunk: Buffer) => (output += chunk.toString()));
  const code = await new Promise<number | null>((resolve) => child.on("close", resolve));
  await writeFile(log, output);
  if (code !== 0) throw new Error(`${bench} from ${dir} exited ${String(code)}: see ${log}`);
  const line = output
    .split("\n")
    .reverse()
    .find((l) => l.startsWith(`{"bench":"${bench}"`));
  if (!line) throw new Error(`${bench} from ${dir} printed no summary: see ${log}`);
  return JSON.parse(line) as Summary;
}

const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
};
const round = (value: number) => (Math.abs(value) >= 100 ? Math.round(value) : Number(value.toFixed(3)));

async function main() {
  const [bench, ref, roundsArg] = process.argv.slice(2);
  if (!bench || !ref || !(bench in figures)) {
    console.error(`usage: npm run bench:ab -- <${Object.keys(figures).join("|")}> <ref> [rounds]`);
    process.exit(2);
  }
  const rounds = Number(roundsArg ?? 2);
  const a = checkoutOf(ref);
  const head = execFileSync("git", ["rev-parse", "--short", "HEAD"], { cwd: repo, encoding: "utf8" }).trim();
  const logs = join(a.dir, "..", "logs", `${bench}-${Date.now()}`);
  await mkdir(logs, { recursive: true });
  const sides = { A: a.dir, B: repo } as const;
  const results: { side: "A" | "B"; round: number; values: Record<string, number> }[] = [];
  for (let round = 1; round <= rounds; round++) {
    const order = round % 2 === 1 ? (["A", "B"] as const) : (["B", "A"] as const);
    for (const side of order) {
      console.log(`[ab] round ${round}: ${side} (${side === "A" ? a.sha.slice(0, 7) : `${head} (this checkout)`})`);
      const summary = await benchOnce(sides[side], bench, join(logs, `${side}-${round}.log`));
      const values = Object.fromEntries(Object.entries(figures[bench]!).map(([name, of]) => [name, of(summary)]));
      results.push({ side, round, values });
      console.log(JSON.stringify({ side, round, ...values }));
    }
  }
  const table: Record<string, Record<string, number>> = {};
  for (const name of Object.keys(figures[bench]!)) {
    const of = (side: "A" | "B") => median(results.filter((r) => r.side === side).map((r) => r.values[name]!));
    table[name] = {
      [`A ${a.sha.slice(0, 7)} (median)`]: round(of("A")),
      [`B ${head} (median)`]: round(of("B")),
      "B / A": round(of("B") / of("A")),
    };
  }
  console.log(`${bench}: ${rounds} run(s) each, alternating; logs in ${logs}`);
  console.table(table);
}

await main();

/**
 * Where Postgres's CPU went while a path's sends ran, by stage of the server's work (issue 33):
 * the Postgres half of cpu-profile-stages.ts, from `perf` call-graph samples of the database's
 * backends (bench:notify's BENCH_PG_PERF=<dir> records one perf.data per path and closed loop; on
 * a machine with `perf`, which Postgres's exported function names are enough for).
 *
 * Each sample's stack is read from the leaf up and charged to the first frame a stage names, so a
 * sample inside an index insert made by a statement that PL/pgSQL runs is an index insert, and
 * only what PL/pgSQL does itself (its per-call setup, its simple expressions, an exception block's
 * subtransaction) is charged to PL/pgSQL. Frames without a name (static functions) claim nothing
 * and are passed through to their caller. Shares are of the samples of the recorded backends;
 * times the bench's Postgres CPU ms per send they give each stage's ms per send.
 */
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";

/** Stages, in the order a frame is tested; a stage's functions are matched by exact name. */
export const PG_STAGES: [stage: string, functions: string[]][] = [
  ["commit: WAL flush (write, fdatasync)", ["XLogFlush", "XLogWrite", "XLogBackgroundFlush"]],
  ["commit: the rest (locks, snapshots, clean-up)", ["CommitTransactionCommand", "AbortCurrentTransaction"]],
  ["check constraints (parsed and compiled each statement)", ["ExecConstraints"]],
  ["foreign keys and other after-triggers", ["AfterTriggerEndQuery", "AfterTriggerFireDeferred"]],
  ["index inserts", ["ExecInsertIndexTuples"]],
  ["heap inserts and updates", ["heap_insert", "heap_update", "heap_multi_insert"]],
  ["WAL records (insert)", ["XLogInsert", "XLogInsertRecord"]],
  ["executor start (plan to executable state)", ["standard_ExecutorStart", "ExecutorStart"]],
  ["executor end", ["standard_ExecutorEnd", "ExecutorEnd"]],
  ["plan cache (cached plan check, generic plan)", ["GetCachedPlan", "RevalidateCachedQuery", "BuildCachedPlan"]],
  [
    "sequences (nextval, setval) and advisory locks",
    ["nextval_internal", "setval_oid", "setval3_oid", "pg_sequence_last_value"],
  ],
  [
    "PL/pgSQL outside its statements (call setup, simple expressions, exception blocks)",
    ["plpgsql_call_handler", "plpgsql_exec_function", "plpgsql_compile", "plpgsql_inline_handler"],
  ],
  ["executor run (scans, joins, expressions)", ["standard_ExecutorRun", "ExecutorRun"]],
  ["client protocol (bind, describe, portal)", ["exec_bind_message", "exec_execute_message", "PortalRun"]],
  ["socket reads and writes", ["secure_read", "secure_write", "pq_getbyte", "pq_flush", "pq_getmessage"]],
  ["transaction start", ["StartTransactionCommand", "StartTransaction"]],
  ["backend main loop (protocol messages without a named frame, idle wait)", ["PostgresMain"]],
];

const stageOfFunction = new Map<string, string>(
  PG_STAGES.flatMap(([stage, functions]) => functions.map((f) => [f, stage] as const)),
);
// The lock-manager functions advisory locks go through, charged with the sequences' pacing step
// only when a pg_advisory_* function is on the stack (a relation lock is not a stage of its own).
const advisory = /^pg_(try_)?advisory_/;

/** A sample's stack (leaf first, function names; "[unknown]" for frames perf could not name). */
export type Stack = string[];

/** Reads `perf script -F pid,ip,sym` text: one stack per sample, leaf first, with its pid. */
export function parsePerfScript(text: string): { pid: number; stack: Stack }[] {
  const samples: { pid: number; stack: Stack }[] = [];
  let current: { pid: number; stack: Stack } | undefined;
  for (const line of text.split("\n")) {
    if (line.trim() === "") {
      if (current) samples.push(current);
      current = undefined;
    } else if (!line.startsWith("\t")) {
      if (current) samples.push(current);
      current = { pid: Number(line.trim().split(/\s+/)[0]), stack: [] };
    } else if (current) {
      // The address, then the symbol, which may hold spaces (a JS frame's name and script).
      const symbol = line.trim().replace(/^[0-9a-f]+\s*/, "") || "[unknown]";
      current.stack.push(symbol.replace(/\+0x[0-9a-f]+$/, ""));
    }
  }
  if (current) samples.push(current);
  return samples;
}

/** The stage a sample is charged to: the first frame from the leaf up that a stage names. */
export function pgStageOf(stack: Stack): string {
  for (const frame of stack) {
    if (advisory.test(frame)) return "sequences (nextval, setval) and advisory locks";
    const stage = stageOfFunction.get(frame);
    if (stage) return stage;
  }
  return "other (background work, unnamed frames)";
}

/** Each stage's share of the samples, a sample's stage as `stageOf` says. */
export function stageShares(samples: { stack: Stack }[], stageOf: (stack: Stack) => string): Map<string, number> {
  const counts = new Map<string, number>();
  for (const { stack } of samples) {
    const stage = stageOf(stack);
    counts.set(stage, (counts.get(stage) ?? 0) + 1);
  }
  return new Map([...counts].map(([stage, n]) => [stage, n / samples.length] as const));
}

/** Each stage's share of the samples of Postgres's backends. */
export function pgStages(samples: { stack: Stack }[]): { samples: number; shares: Map<string, number> } {
  return { samples: samples.length, shares: stageShares(samples, pgStageOf) };
}

/**
 * Lines of a table of stages by column: each stage's ms per send (its share times the column's
 * /proc CPU ms per send), in the order of the first column's largest stages (then any stage only
 * the others have), and the total.
 */
export function stageTableLines(
  columns: { label: string; msPerSend: number; shares: Map<string, number> }[],
): string[] {
  const order = [...(columns[0]?.shares ?? new Map<string, number>())]
    .sort((a, b) => b[1] - a[1])
    .map(([stage]) => stage);
  for (const c of columns) for (const stage of c.shares.keys()) if (!order.includes(stage)) order.push(stage);
  const width = Math.max(5, ...order.map((stage) => stage.length)) + 2;
  const cell = (c: { label: string }, text: string) => text.padStart(Math.max(c.label.length, 9) + 2);
  const row = (name: string, cells: string[]) => `  ${name.padEnd(width)}${cells.join("")}`;
  return [
    row(
      "stage",
      columns.map((c) => cell(c, c.label)),
    ),
    ...order.map((stage) =>
      row(
        stage,
        columns.map((c) => cell(c, ((c.shares.get(stage) ?? 0) * c.msPerSend).toFixed(3))),
      ),
    ),
    row(
      "total (/proc)",
      columns.map((c) => cell(c, c.msPerSend.toFixed(3))),
    ),
  ];
}

/** `perf script -F pid,ip,sym` of one perf.data file. */
export function perfScriptOf(file: string): string {
  return execFileSync("perf", ["script", "-i", file, "-F", "pid,ip,sym"], {
    encoding: "utf8",
    maxBuffer: 1 << 30,
    stdio: ["ignore", "pipe", "ignore"],
  });
}

/**
 * The samples of one or more perf.data files (through `perf script`), or of the text perf script
 * wrote of one (`<file>.script`, kept where perf could no longer name the frames).
 */
export function readPerfData(files: string[]): { pid: number; stack: Stack }[] {
  return files.flatMap((file) =>
    parsePerfScript(file.endsWith(".script") ? readFileSync(file, "utf8") : perfScriptOf(file)),
  );
}

/** Lines of a table: Postgres's CPU by stage, ms per send, per path. */
export function pgStageTable(paths: { label: string; msPerSend: number; files: string[] }[]): string[] {
  const read = paths.map((p) => ({ ...p, ...pgStages(readPerfData(p.files)) }));
  return [
    `Postgres CPU by stage, ms per send (perf samples: ${read.map((p) => `${p.label} ${p.samples}`).join(", ")}):`,
    ...stageTableLines(read),
  ];
}

if (process.argv[1] && import.meta.filename === process.argv[1]) {
  // node bench/dist/pg-perf-stages.js <label>=<ms per send>=<file>[,<file>...] ...
  const paths = process.argv.slice(2).map((arg) => {
    const [label = "", ms = "1", files = ""] = arg.split("=");
    return { label, msPerSend: Number(ms), files: files.split(",") };
  });
  for (const line of pgStageTable(paths)) console.log(line);
}

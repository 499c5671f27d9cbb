/**
 * Where our processes' CPU went, by stage of the send, from `perf` samples (issue 33): bench:notify's
 * BENCH_NODE_PERF=<dir> starts the measured Node processes with V8's jitdump (`--perf-prof
 * --interpreted-frames-native-stack`, bench/profiled-env.ts), records each path's processes with
 * `perf record -g -k mono` during its closed loops, and names their JS frames with `perf inject
 * --jit`, which places every sample against the code V8 had at that address at that time (a perf
 * map has no times, and V8 reuses the addresses of code it drops or moves).
 *
 * Why not only the V8 CPU profiles of BENCH_CPU_PROF: the inspector's sampler is wall-clock, so a
 * process that is runnable but waiting for a core is charged to whatever it was doing when it lost
 * the core. On a machine whose cores are all busy that is mostly a socket write (a write to
 * Postgres wakes the backend, which takes the core): the V8 profiles put 35-47% of notify's and the
 * floor's gRPC server's "busy" time in `writev`, and their busy seconds were about twice the
 * processes' CPU seconds from /proc, while perf (on-CPU samples only, every thread of the process)
 * finds 5-8% of their CPU in socket writes, kernel included. perf's shares are of CPU.
 *
 * Each sample's stack is charged as cpu-profile-stages.ts charges a V8 profile's (the same stages,
 * `stageOfFrames`), with perf's frames as V8's: a JS frame's script and function from its
 * symbol, native frames without a script. A sample inside V8's collector (on the main thread, on
 * an allocation, or on a helper thread) is the garbage collector's; one without any JS frame is
 * "(program)", as in a V8 profile.
 */
import { type Frame, stageOfFrames } from "./cpu-profile-stages.js";
import { execFileSync } from "node:child_process";
import { writeFileSync } from "node:fs";
import { type Stack, perfScriptOf, readPerfData, stageShares, stageTableLines } from "./pg-perf-stages.js";

/** A V8 collector's frame (the scavenger, the mark-compact and its helpers, the sweeper). */
const COLLECTOR =
  /^v8::internal::(Scavenger|ScavengerCollector|ScavengeJob|MarkCompactCollector|MinorMarkSweepCollector|MinorMarkCompactCollector|ConcurrentMarking|IncrementalMarking|MarkingVisitorBase|MainMarkingVisitor|ConcurrentMarkingVisitor|YoungGenerationMarkingVisitor|Sweeper|GCTracer|MemoryReducer|ArrayBufferSweeper|Heap::(CollectGarbage|PerformGarbageCollection|Scavenge|MarkCompact|MinorMarkSweep|CollectAllGarbage))|^(heap::base|cppgc)::/;

/** A symbol V8 gives its code (`JS:*name file:///…:line:col`, `Script:~ /path.js:1:1`) as a frame. */
export function frameOfSymbol(symbol: string): Frame {
  const js = /^(?:JS|Script|Function|LazyCompile|Eval):[~^+*]?(.*)$/.exec(symbol);
  if (!js) return { url: "", functionName: symbol };
  const rest = js[1]!;
  const space = rest.lastIndexOf(" ");
  const where = space >= 0 ? rest.slice(space + 1) : rest;
  if (!/:\d+:\d+$/.test(where)) return { url: "", functionName: rest };
  return { url: where.replace(/:\d+:\d+$/, ""), functionName: space >= 0 ? rest.slice(0, space) : "" };
}

/** The stage of one perf sample of a Node process (its stack leaf first). */
export function nodeStageOf(stack: Stack): string {
  if (stack.some((symbol) => COLLECTOR.test(symbol))) return "garbage collector";
  const frames = stack.map(frameOfSymbol);
  if (!frames.some((frame) => frame.url !== "")) return "(program: V8 and libuv outside JS)";
  return stageOfFrames(frames);
}

/** Each stage's share of one process's samples. */
export function nodeStages(samples: { pid: number; stack: Stack }[], pid: number): Map<string, number> {
  return stageShares(
    samples.filter((s) => s.pid === pid),
    nodeStageOf,
  );
}

/**
 * A recording of Node processes with its JS frames named from their jitdumps (`perf inject
 * --jit`, while the dumps are there), kept as `<file>.script`, which readPerfData reads: returns
 * its path.
 */
export function namedStacks(file: string): string {
  execFileSync("perf", ["inject", "--jit", "-i", file, "-o", `${file}.jit`], { stdio: "ignore" });
  writeFileSync(`${file}.script`, perfScriptOf(`${file}.jit`));
  return `${file}.script`;
}

export interface RecordedProcess {
  label: string;
  pid: number;
  /** Its CPU ms per send in the same loops (/proc). */
  msPerSend: number;
}

/**
 * Lines of a table: each stage's ms per send in each process (its share of the process's samples
 * times its /proc CPU ms per send), and each process's number of samples.
 */
export function nodeStageTable(columns: { processes: RecordedProcess[]; files: string[] }[]): string[] {
  const read = columns.flatMap(({ processes, files }) => {
    const samples = readPerfData(files);
    return processes.map((p) => ({
      ...p,
      samples: samples.filter((s) => s.pid === p.pid).length,
      shares: nodeStages(samples, p.pid),
    }));
  });
  return [
    `Our processes' and the floors' CPU by stage, ms per send (perf samples: ${read.map((p) => `${p.label} ${p.samples}`).join(", ")}):`,
    ...stageTableLines(read),
  ];
}

/**
 * Event-loop stalls and long garbage collections, per process, by wall-clock time: what a slow
 * second of an open loop was waiting for. Preloaded with `node --import` (NODE_OPTIONS) into the
 * measured processes when BENCH_LOOP_STALLS=<dir> is set (bench/profiled-env.ts): each appends one
 * JSON line per stall to <dir>/<name>-<pid>.jsonl as it happens, so a bench can read a round's
 * stalls while the processes still run. The bench's own process records through
 * `recordLoopStalls` too (its stalls delay the requests it schedules).
 *
 * A stall: a 10 ms interval timer that fired `STALL_MS` (20 ms) or more late, recorded as the gap
 * beyond its 10 ms (`ms`) ending at `at` (epoch ms). A GC: a `gc` performance entry of `GC_MS`
 * (10 ms) or more (`kind`: V8's major, minor, incremental or weak-callback flag), `at` its start.
 */
import { appendFileSync, readdirSync, readFileSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import { PerformanceObserver, performance } from "node:perf_hooks";

export const STALL_MS = 20;
export const GC_MS = 10;
const TICK_MS = 10;

export interface LoopEvent {
  process: string;
  what: "stall" | "gc";
  /** Epoch ms: the stall's end, the collection's start. */
  at: number;
  ms: number;
  kind?: number;
}

/** Starts recording this process's stalls and long collections into `sink`. Returns a stop function. */
export function recordLoopStalls(name: string, sink: (event: LoopEvent) => void): () => void {
  let last = performance.now();
  const timer = setInterval(() => {
    const now = performance.now();
    const late = now - last - TICK_MS;
    last = now;
    if (late >= STALL_MS) sink({ process: name, what: "stall", at: Date.now(), ms: Math.round(late) });
  }, TICK_MS);
  timer.unref();
  const origin = performance.timeOrigin;
  const observer = new PerformanceObserver((list) => {
    for (const entry of list.getEntries()) {
      if (entry.duration < GC_MS) continue;
      const detail = (entry as unknown as { detail?: { kind?: number } }).detail;
      sink({
        process: name,
        what: "gc",
        at: Math.round(origin + entry.startTime),
        ms: Math.round(entry.duration),
        kind: detail?.kind,
      });
    }
  });
  observer.observe({ entryTypes: ["gc"] });
  return () => {
    clearInterval(timer);
    observer.disconnect();
  };
}

/** Every event the preloaded processes wrote to `dir`, in time order. */
export function readLoopEvents(dir: string): LoopEvent[] {
  const events: LoopEvent[] = [];
  for (const file of readdirSync(dir).filter((f) => f.endsWith(".jsonl"))) {
    for (const line of readFileSync(join(dir, file), "utf8").split("\n")) {
      if (line) events.push(JSON.parse(line) as LoopEvent);
    }
  }
  return events.sort((a, b) => a.at - b.at);
}

/** Per process within [from, to]: stalls (count, summed ms, largest) and long collections. */
export function summariseLoopEvents(events: LoopEvent[], from: number, to: number): string {
  const byProcess = new Map<string, { stalls: number[]; gcs: number[] }>();
  for (const e of events) {
    if (e.at < from || e.at > to) continue;
    const entry = byProcess.get(e.process) ?? { stalls: [], gcs: [] };
    (e.what === "stall" ? entry.stalls : entry.gcs).push(e.ms);
    byProcess.set(e.process, entry);
  }
  if (byProcess.size === 0) return `no stall of ${STALL_MS} ms or more, no collection of ${GC_MS} ms or more`;
  const sum = (xs: number[]) => xs.reduce((a, b) => a + b, 0);
  return [...byProcess]
    .map(
      ([name, { stalls, gcs }]) =>
        `${name}: ${stalls.length} stalls (${sum(stalls)} ms, largest ${Math.max(0, ...stalls)}), ` +
        `${gcs.length} collections (${sum(gcs)} ms)`,
    )
    .join("; ");
}

const dir = process.env.BENCH_LOOP_STALLS;
// Preloaded into a measured process (profiled() marks it); the bench itself calls recordLoopStalls.
if (dir && process.env.BENCH_LOOP_STALLS_CHILD === "1") {
  const script = process.argv[1] ?? "node";
  const name = basename(script) === "main.js" ? basename(dirname(dirname(dirname(script)))) : basename(script, ".js");
  const file = join(dir, `${name}-${process.pid}.jsonl`);
  recordLoopStalls(name, (event) => appendFileSync(file, `${JSON.stringify(event)}\n`));
}

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
 * Each second, a `heap` line: every collection of that second, short ones included (`minor`,
 * `minorMs`, `major`, `majorMs`), and the young generation's size then (`youngKb`, V8's new space,
 * which V8 shrinks while a process is idle and grows again under load): what a round after an
 * idle spell pays that the round before did not.
 */
import { appendFileSync, readdirSync, readFileSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import { PerformanceObserver, constants, performance } from "node:perf_hooks";
import { getHeapSpaceStatistics } from "node:v8";

export const STALL_MS = 20;
export const GC_MS = 10;
const TICK_MS = 10;

export interface LoopEvent {
  process: string;
  what: "stall" | "gc" | "heap";
  /** Epoch ms: the stall's end, the collection's start, the second's end. */
  at: number;
  ms: number;
  kind?: number;
  /** heap: the second's scavenges (young generation) and other collections, counts and ms. */
  minor?: number;
  minorMs?: number;
  major?: number;
  majorMs?: number;
  /** heap: V8's new space at the second's end, KB. */
  youngKb?: number;
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
  const second = { minor: 0, minorMs: 0, major: 0, majorMs: 0 };
  const heapTimer = setInterval(() => {
    const young = getHeapSpaceStatistics().find((space) => space.space_name === "new_space");
    sink({
      process: name,
      what: "heap",
      at: Date.now(),
      ms: 0,
      minor: second.minor,
      minorMs: Math.round(second.minorMs * 10) / 10,
      major: second.major,
      majorMs: Math.round(second.majorMs * 10) / 10,
      youngKb: Math.round((young?.space_size ?? 0) / 1024),
    });
    Object.assign(second, { minor: 0, minorMs: 0, major: 0, majorMs: 0 });
  }, 1000);
  heapTimer.unref();
  const observer = new PerformanceObserver((list) => {
    for (const entry of list.getEntries()) {
      const detail = (entry as unknown as { detail?: { kind?: number } }).detail;
      if (detail?.kind === constants.NODE_PERFORMANCE_GC_MINOR) {
        second.minor++;
        second.minorMs += entry.duration;
      } else {
        second.major++;
        second.majorMs += entry.duration;
      }
      if (entry.duration < GC_MS) continue;
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
    clearInterval(heapTimer);
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

/**
 * Per process within [from, to]: stalls (count, summed ms, largest), long collections, and, from
 * the per-second heap lines, every collection (scavenges and others, count and ms) and the young
 * generation's size at the window's first and last second.
 */
export function summariseLoopEvents(events: LoopEvent[], from: number, to: number): string {
  type Seen = { stalls: number[]; gcs: number[]; heap: LoopEvent[] };
  const byProcess = new Map<string, Seen>();
  for (const e of events) {
    if (e.at < from || e.at > to) continue;
    const entry = byProcess.get(e.process) ?? { stalls: [], gcs: [], heap: [] };
    if (e.what === "heap") entry.heap.push(e);
    else (e.what === "stall" ? entry.stalls : entry.gcs).push(e.ms);
    byProcess.set(e.process, entry);
  }
  const sum = (xs: number[]) => xs.reduce((a, b) => a + b, 0);
  const line = ([name, { stalls, gcs, heap }]: [string, Seen]) => {
    const all =
      heap.length === 0
        ? ""
        : `; all collections: ${sum(heap.map((h) => h.minor ?? 0))} scavenges (${sum(heap.map((h) => h.minorMs ?? 0)).toFixed(0)} ms), ` +
          `${sum(heap.map((h) => h.major ?? 0))} others (${sum(heap.map((h) => h.majorMs ?? 0)).toFixed(0)} ms), ` +
          `young generation ${heap[0]!.youngKb} -> ${heap.at(-1)!.youngKb} KB`;
    return (
      `${name}: ${stalls.length} stalls (${sum(stalls)} ms, largest ${Math.max(0, ...stalls)}), ` +
      `${gcs.length} collections of ${GC_MS} ms or more (${sum(gcs)} ms)${all}`
    );
  };
  // A process is in the map only once one of its events fell in the window.
  if (byProcess.size === 0) return `no stall of ${STALL_MS} ms or more, no collection of ${GC_MS} ms or more`;
  return [...byProcess].map(line).join("; ");
}

const dir = process.env.BENCH_LOOP_STALLS;
// Preloaded into a measured process (profiled() marks it); the bench itself calls recordLoopStalls.
if (dir && process.env.BENCH_LOOP_STALLS_CHILD === "1") {
  const script = process.argv[1] ?? "node";
  const name = basename(script) === "main.js" ? basename(dirname(dirname(dirname(script)))) : basename(script, ".js");
  const file = join(dir, `${name}-${process.pid}.jsonl`);
  recordLoopStalls(name, (event) => appendFileSync(file, `${JSON.stringify(event)}\n`));
}

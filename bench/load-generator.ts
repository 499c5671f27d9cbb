import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import autocannon from "autocannon";
import { cpuMillis } from "./process-cpu.js";

export interface LoadResult {
  label: string;
  requestsPerSecond: number;
  p50Ms: number;
  p99Ms: number;
  requests: number;
  errors: number;
  non2xx: number;
  /** CPU (user + system) each named process spent per answered request during the measured run. */
  cpuMsPerRequest?: Record<string, number>;
}

export interface LoadOptions {
  connections: number;
  durationSeconds: number;
  headers?: Record<string, string>;
  /** Processes whose CPU time is read (Linux /proc) around the measured run. */
  processes?: MeasuredProcess[];
}

export interface MeasuredProcess {
  name: string;
  pid: number;
}

/** The p-th percentile of ascending `sorted` values (nearest rank below; NaN when empty). */
export function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

/** Drives one URL with autocannon at fixed concurrency: a warm-up, then the measured run. */
export async function measure(label: string, url: string, options: LoadOptions): Promise<LoadResult> {
  const run = (duration: number) =>
    autocannon({ url, connections: options.connections, duration, headers: options.headers ?? {} });
  await run(2); // warm-up: JIT, connection pools, caches; not counted
  const processes = options.processes ?? [];
  const cpuBefore = processes.map((p) => cpuMillis(p.pid));
  const result = await run(options.durationSeconds);
  const cpuMsPerRequest: Record<string, number> = {};
  processes.forEach((p, i) => {
    const before = cpuBefore[i];
    const after = cpuMillis(p.pid);
    if (before !== undefined && after !== undefined && result.requests.total > 0) {
      cpuMsPerRequest[p.name] = (after - before) / result.requests.total;
    }
  });
  return {
    label,
    requestsPerSecond: result.requests.average,
    p50Ms: result.latency.p50,
    p99Ms: result.latency.p99,
    requests: result.requests.total,
    errors: result.errors + result.timeouts,
    non2xx: result.non2xx,
    ...(processes.length > 0 ? { cpuMsPerRequest } : {}),
  };
}

/** Mean of the runs with the same label (the runs alternate to share the machine's noise). */
export function combine(results: LoadResult[]): LoadResult {
  const mean = (pick: (r: LoadResult) => number) => results.reduce((sum, r) => sum + pick(r), 0) / results.length;
  const sum = (pick: (r: LoadResult) => number) => results.reduce((total, r) => total + pick(r), 0);
  return {
    label: results[0]!.label,
    requestsPerSecond: mean((r) => r.requestsPerSecond),
    p50Ms: mean((r) => r.p50Ms),
    p99Ms: mean((r) => r.p99Ms),
    requests: sum((r) => r.requests),
    errors: sum((r) => r.errors),
    non2xx: sum((r) => r.non2xx),
    ...(results[0]!.cpuMsPerRequest
      ? {
          cpuMsPerRequest: Object.fromEntries(
            Object.keys(results[0]!.cpuMsPerRequest).map((name) => [name, mean((r) => r.cpuMsPerRequest?.[name] ?? 0)]),
          ),
        }
      : {}),
  };
}

export function printTable(results: LoadResult[]): void {
  const rows = results.map((r) => ({
    path: r.label,
    "req/s": Math.round(r.requestsPerSecond),
    "p50 ms": r.p50Ms.toFixed(2),
    "p99 ms": r.p99Ms.toFixed(2),
    requests: r.requests,
    "errors+non2xx": r.errors + r.non2xx,
    ...(r.cpuMsPerRequest
      ? {
          "CPU ms/req": Object.entries(r.cpuMsPerRequest)
            .map(([name, ms]) => `${name} ${ms.toFixed(3)}`)
            .join(", "),
        }
      : {}),
  }));
  console.table(rows);
}

export interface Target {
  label: string;
  url: string;
  headers?: Record<string, string>;
  processes?: MeasuredProcess[];
}

/**
 * Measures every target in turn, round after round (A B C A B C ...), so all share the machine's
 * noise; returns every run in order and the per-target means (in the targets' order). Throws when
 * any request failed.
 */
export async function measureAlternating(
  targets: Target[],
  options: { connections: number; durationSeconds: number; rounds?: number },
): Promise<{ runs: LoadResult[]; means: LoadResult[] }> {
  const runs: LoadResult[] = [];
  for (let round = 0; round < (options.rounds ?? 2); round++) {
    for (const target of targets) {
      runs.push(
        await measure(target.label, target.url, {
          connections: options.connections,
          durationSeconds: options.durationSeconds,
          headers: target.headers ?? {},
          processes: target.processes ?? [],
        }),
      );
    }
  }
  const means = targets.map((target) => combine(runs.filter((r) => r.label === target.label)));
  if (means.some((m) => m.errors + m.non2xx > 0)) {
    printTable(runs);
    throw new Error("requests failed during the benchmark");
  }
  return { runs, means };
}

/**
 * Measures a baseline and a candidate in alternation (A B A B) so both share the machine's noise,
 * prints the table, and returns the means and the candidate/baseline throughput ratio.
 */
export async function compareAlternating(
  baseline: Target,
  candidate: Target,
  options: { connections: number; durationSeconds: number; rounds?: number },
): Promise<{ baseline: LoadResult; candidate: LoadResult; ratio: number }> {
  const {
    means: [base, cand],
  } = await measureAlternating([baseline, candidate], options);
  printTable([base!, cand!]);
  return { baseline: base!, candidate: cand!, ratio: cand!.requestsPerSecond / base!.requestsPerSecond };
}

/** Prints the summary as one JSON line and keeps it under bench/results (git-ignored). */
export async function recordResult(repo: string, name: string, summary: object): Promise<void> {
  console.log(JSON.stringify(summary));
  await mkdir(join(repo, "bench", "results"), { recursive: true });
  await writeFile(join(repo, "bench", "results", `${name}-${Date.now()}.json`), JSON.stringify(summary, null, 2));
}

import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import autocannon from "autocannon";

export interface LoadResult {
  label: string;
  requestsPerSecond: number;
  p50Ms: number;
  p99Ms: number;
  requests: number;
  errors: number;
  non2xx: number;
}

export interface LoadOptions {
  connections: number;
  durationSeconds: number;
  headers?: Record<string, string>;
}

/** Drives one URL with autocannon at fixed concurrency: a warm-up, then the measured run. */
export async function measure(label: string, url: string, options: LoadOptions): Promise<LoadResult> {
  const run = (duration: number) =>
    autocannon({ url, connections: options.connections, duration, headers: options.headers ?? {} });
  await run(2); // warm-up: JIT, connection pools, caches; not counted
  const result = await run(options.durationSeconds);
  return {
    label,
    requestsPerSecond: result.requests.average,
    p50Ms: result.latency.p50,
    p99Ms: result.latency.p99,
    requests: result.requests.total,
    errors: result.errors + result.timeouts,
    non2xx: result.non2xx,
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
  }));
  console.table(rows);
}

export interface Target {
  label: string;
  url: string;
  headers?: Record<string, string>;
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
  const runs: LoadResult[] = [];
  for (let round = 0; round < (options.rounds ?? 2); round++) {
    for (const target of [baseline, candidate]) {
      runs.push(
        await measure(target.label, target.url, {
          connections: options.connections,
          durationSeconds: options.durationSeconds,
          headers: target.headers ?? {},
        }),
      );
    }
  }
  const base = combine(runs.filter((r) => r.label === baseline.label));
  const cand = combine(runs.filter((r) => r.label === candidate.label));
  printTable([base, cand]);
  if (base.errors + base.non2xx + cand.errors + cand.non2xx > 0) {
    throw new Error("requests failed during the benchmark");
  }
  return { baseline: base, candidate: cand, ratio: cand.requestsPerSecond / base.requestsPerSecond };
}

/** Prints the summary as one JSON line and keeps it under bench/results (git-ignored). */
export async function recordResult(repo: string, name: string, summary: object): Promise<void> {
  console.log(JSON.stringify(summary));
  await mkdir(join(repo, "bench", "results"), { recursive: true });
  await writeFile(join(repo, "bench", "results", `${name}-${Date.now()}.json`), JSON.stringify(summary, null, 2));
}

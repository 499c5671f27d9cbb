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

import { join } from "node:path";

const repo = join(import.meta.dirname, "..", "..");

/**
 * The environment of a measured process, extended through NODE_OPTIONS (which refuses --cpu-prof)
 * with what the bench was asked to record:
 * - BENCH_CPU_PROF=<dir>: a V8 CPU profile written there when the process exits
 *   (bench/cpu-profile.ts). Summarise with `node bench/dist/cpu-profile-summary.js <dir>/*.cpuprofile`.
 * - BENCH_LOOP_STALLS=<dir>: its event-loop stalls and long collections, appended there as they
 *   happen (bench/loop-stalls.ts).
 */
export function profiled(env: Record<string, string>): Record<string, string> {
  const profileDir = process.env.BENCH_CPU_PROF;
  const stallDir = process.env.BENCH_LOOP_STALLS;
  const preloads: string[] = [];
  const extra: Record<string, string> = {};
  if (profileDir) {
    preloads.push(`--import=${join(repo, "bench", "dist", "cpu-profile.js")}`);
    extra.BENCH_CPU_PROF = profileDir;
  }
  if (stallDir) {
    preloads.push(`--import=${join(repo, "bench", "dist", "loop-stalls.js")}`);
    extra.BENCH_LOOP_STALLS = stallDir;
    extra.BENCH_LOOP_STALLS_CHILD = "1";
  }
  return preloads.length > 0 ? { ...env, ...extra, NODE_OPTIONS: preloads.join(" ") } : env;
}

import { join } from "node:path";

const repo = join(import.meta.dirname, "..", "..");

/**
 * BENCH_CPU_PROF=<dir>: the environment of a measured process, extended so that it writes a V8
 * CPU profile there when it exits (bench/cpu-profile.ts, preloaded through NODE_OPTIONS, which
 * refuses --cpu-prof). Summarise with `node bench/dist/cpu-profile-summary.js <dir>/*.cpuprofile`.
 */
export function profiled(env: Record<string, string>): Record<string, string> {
  const profileDir = process.env.BENCH_CPU_PROF;
  return profileDir
    ? { ...env, BENCH_CPU_PROF: profileDir, NODE_OPTIONS: `--import=${join(repo, "bench", "dist", "cpu-profile.js")}` }
    : env;
}

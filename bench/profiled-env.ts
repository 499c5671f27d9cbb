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

/**
 * The Node options of a measured process that NODE_OPTIONS refuses (StartOptions.execArgv):
 * - BENCH_NODE_ARGS: options given as they are (space-separated), to A/B a V8 setting.
 * - BENCH_NODE_PERF=<dir>: V8's jitdump there (`jit-<pid>.dump`, interpreted frames included, and
 *   the log V8 opens with it), from which `perf inject --jit` names the JS frames of the process's
 *   perf recording at the time of each sample (bench/node-perf-stages.ts). A perf map
 *   (`--perf-basic-prof`) names them by address alone, and V8 reuses the addresses of code it
 *   drops or moves, so a hot function's samples came out under another's name.
 */
export function profiledArgs(): string[] {
  const dir = process.env.BENCH_NODE_PERF;
  const extra = (process.env.BENCH_NODE_ARGS ?? "").split(" ").filter(Boolean);
  if (!dir) return extra;
  return [
    ...extra,
    "--perf-prof",
    `--perf-prof-path=${dir}`,
    "--interpreted-frames-native-stack",
    `--logfile=${join(dir, "v8-%p.log")}`,
  ];
}

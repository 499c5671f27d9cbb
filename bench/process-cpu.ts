/**
 * CPU time of process groups from Linux /proc, for benches that print CPU ms per unit of work:
 * a snapshot maps each pid of a group to its user + system time so far; the difference of two
 * snapshots sums, over the pids alive at the second one, what each spent since the first (a
 * process that started in between counts whole; one that exited in between is lost, never
 * negative). Off Linux every figure is 0.
 */
import { readdirSync, readFileSync } from "node:fs";

const clockTicksPerSecond = 100; // USER_HZ: the unit of utime and stime in /proc/<pid>/stat

/** CPU milliseconds (user + system) a process has used so far, or undefined when unreadable. */
export function cpuMillis(pid: number): number | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / clockTicksPerSecond;
  } catch {
    return undefined;
  }
}

function read(path: string): string | undefined {
  try {
    return readFileSync(path, "utf8");
  } catch {
    return undefined;
  }
}

/** Every process whose command name (/proc/<pid>/comm) starts with `prefix`. */
export function pidsByCommand(prefix: string): number[] {
  let entries: string[];
  try {
    entries = readdirSync("/proc");
  } catch {
    return [];
  }
  return entries
    .filter((name) => /^\d+$/.test(name))
    .map(Number)
    .filter((pid) => read(`/proc/${pid}/comm`)?.startsWith(prefix) ?? false);
}

/** Postgres backends serving `database` (their process title names it: `postgres: … user db host …`). */
export function postgresBackendsOf(database: string): number[] {
  return pidsByCommand("postgres").filter((pid) =>
    (read(`/proc/${pid}/cmdline`) ?? "").replaceAll("\0", " ").split(" ").includes(database),
  );
}

/** Each group's pids are found anew at every snapshot (backends come and go). */
export type ProcessGroups = Record<string, () => number[]>;
export type CpuSnapshot = Record<string, Map<number, number>>;

export function cpuSnapshot(groups: ProcessGroups): CpuSnapshot {
  const snapshot: CpuSnapshot = {};
  for (const [name, pids] of Object.entries(groups)) {
    const times = new Map<number, number>();
    for (const pid of pids()) {
      const ms = pid === process.pid ? cpuOfThisProcess() : cpuMillis(pid);
      if (ms !== undefined) times.set(pid, ms);
    }
    snapshot[name] = times;
  }
  return snapshot;
}

/** This process's CPU from process.cpuUsage (finer than /proc's ticks). */
function cpuOfThisProcess(): number {
  const usage = process.cpuUsage();
  return (usage.user + usage.system) / 1000;
}

/** CPU milliseconds each group spent between two snapshots. */
export function cpuSpent(before: CpuSnapshot, after: CpuSnapshot): Record<string, number> {
  const spent: Record<string, number> = {};
  for (const [name, times] of Object.entries(after)) {
    let sum = 0;
    for (const [pid, ms] of times) sum += Math.max(0, ms - (before[name]?.get(pid) ?? 0));
    spent[name] = sum;
  }
  return spent;
}

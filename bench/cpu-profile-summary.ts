/**
 * node bench/dist/cpu-profile-summary.js <file.cpuprofile>... — where a process spent its CPU:
 * self time by package (node_modules/<pkg>, node: internals, our workspaces) and the top
 * functions by self time, as shares of the process's busy (non-idle) samples.
 * Profiles come from `BENCH_CPU_PROF=<dir> npm run bench:catalog` (bench/cpu-profile.ts).
 */
import { readFileSync } from "node:fs";
import { basename, join } from "node:path";
import { pathToFileURL } from "node:url";

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
}
interface Profile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

const top = Number(process.env.TOP ?? 25);
const repoUrl = pathToFileURL(join(import.meta.dirname, "..", "..")).href + "/";

/** Which package (or runtime part) a script URL belongs to. */
function packageOf(url: string): string {
  if (url === "") return "(native / V8)";
  if (url.startsWith("node:")) return `node:${url.slice(5).split("/")[0] ?? ""}`;
  const modules = url.lastIndexOf("/node_modules/");
  if (modules >= 0) {
    const [scope, name] = url.slice(modules + 14).split("/");
    return scope?.startsWith("@") ? `${scope}/${name ?? ""}` : (scope ?? "?");
  }
  if (url.startsWith(repoUrl)) return `ours: ${url.slice(repoUrl.length).split("/").slice(0, 2).join("/")}`;
  return url;
}

function summarize(file: string): void {
  const profile = JSON.parse(readFileSync(file, "utf8")) as Profile;
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const selfUs = new Map<number, number>();
  profile.samples.forEach((id, i) => selfUs.set(id, (selfUs.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0)));
  const functions = new Map<string, number>();
  const packages = new Map<string, number>();
  let busy = 0;
  for (const [id, us] of selfUs) {
    const { functionName, url, lineNumber } = byId.get(id)!.callFrame;
    if (functionName === "(idle)") continue;
    busy += us;
    const where = url === "" ? "" : ` ${url.replace(repoUrl, "").replace(/^.*\/node_modules\//, "")}:${lineNumber + 1}`;
    const fn = `${functionName || "(anonymous)"}${where}`;
    functions.set(fn, (functions.get(fn) ?? 0) + us);
    const pkg = functionName.startsWith("(") ? functionName : packageOf(url);
    packages.set(pkg, (packages.get(pkg) ?? 0) + us);
  }
  const share = (us: number) => `${((us / busy) * 100).toFixed(1).padStart(5)}%`;
  const sorted = (m: Map<string, number>) => [...m].sort((a, b) => b[1] - a[1]);
  console.log(`\n== ${basename(file)}: ${(busy / 1e6).toFixed(2)} s busy CPU`);
  console.log("-- self time by package");
  for (const [name, us] of sorted(packages).slice(0, 20)) console.log(`${share(us)}  ${name}`);
  console.log(`-- top ${top} functions by self time`);
  for (const [name, us] of sorted(functions).slice(0, top)) console.log(`${share(us)}  ${name}`);
}

for (const file of process.argv.slice(2)) summarize(file);

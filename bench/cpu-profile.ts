/**
 * Preloaded with `node --import` (through NODE_OPTIONS, which refuses --cpu-prof) by
 * bench/catalog.ts when BENCH_CPU_PROF is set: samples this process's CPU with the inspector
 * and writes BENCH_CPU_PROF/<service>-<pid>.cpuprofile when the process exits.
 */
import { writeFileSync } from "node:fs";
import { Session } from "node:inspector";
import { basename, dirname, join } from "node:path";

const dir = process.env.BENCH_CPU_PROF;
if (dir) {
  const session = new Session();
  session.connect();
  session.post("Profiler.enable");
  session.post("Profiler.start");
  const script = process.argv[1] ?? "node";
  const name = basename(script) === "main.js" ? basename(dirname(dirname(dirname(script)))) : basename(script, ".js");
  process.on("exit", () => {
    // The main thread's inspector session answers synchronously, so this completes before exit.
    session.post("Profiler.stop", (error, result) => {
      if (!error) writeFileSync(join(dir, `${name}-${process.pid}.cpuprofile`), JSON.stringify(result.profile));
    });
  });
}

import { spawn, type ChildProcess } from "node:child_process";
import { createInterface } from "node:readline";

/** The JSON log line a service prints once it is bound, with its pid and the ports it got. */
export interface ListeningLine {
  msg: "listening";
  service: string;
  [key: string]: unknown;
}

/** A service process from the moment it is spawned: it may not be listening yet. */
export interface SpawnedServiceProcess {
  name: string;
  child: ChildProcess;
  pid: number;
  /** Resolves with the listening line; rejects when the process exits first or does not start in time (then it is killed). */
  listening: Promise<ListeningLine>;
  /** Every stdout line so far, parsed when it was JSON (logs are JSON lines). */
  logs: Record<string, unknown>[];
  stderr: string[];
  /** Resolves with the exit code (or signal name) once the process has exited. */
  exited: Promise<number | string>;
  stop(signal?: NodeJS.Signals): Promise<number | string>;
}

/** A service process that has printed its listening line. */
export interface ServiceProcess extends Omit<SpawnedServiceProcess, "listening"> {
  listening: ListeningLine;
}

export interface StartOptions {
  name: string;
  /** Path of the compiled entry point (…/dist/src/main.js). */
  entry: string;
  /** The child's whole environment besides PATH (tests pass only what they mean to set). */
  env: Record<string, string>;
  /** Node and V8 options before the entry point, for those NODE_OPTIONS refuses (benches' profilers). */
  execArgv?: string[];
  timeoutMs?: number;
  /** Copy the child's output to this process's stdout / stderr (npm start does; tests do not). */
  inheritOutput?: boolean;
  /**
   * Its own process group, so a terminal's Ctrl-C reaches only the supervisor, which then stops
   * the services in order (npm start). Tests leave it in theirs.
   */
  ownProcessGroup?: boolean;
}

/**
 * Spawns one service as its own Node process. The child gets an IPC channel it never uses for
 * messages: when this process dies, even by SIGKILL, the channel closes and the service stops
 * itself (see exitGracefullyOnSignal in the service kit) instead of living on as an orphan.
 */
export function spawnServiceProcess(options: StartOptions): SpawnedServiceProcess {
  const timeoutMs = options.timeoutMs ?? 20_000;
  const child = spawn(process.execPath, [...(options.execArgv ?? []), options.entry], {
    env: { PATH: process.env.PATH ?? "", ...options.env },
    stdio: ["ignore", "pipe", "pipe", "ipc"],
    detached: options.ownProcessGroup ?? false,
  });
  const logs: Record<string, unknown>[] = [];
  const stderr: string[] = [];
  const exited = new Promise<number | string>((resolve) =>
    child.once("exit", (code, signal) => resolve(code ?? signal ?? "unknown")),
  );
  // A spawn that fails (no such executable) emits "error" and then "exit"; "exited" reports it.
  child.once("error", () => undefined);
  const describe = () => [...logs.map((l) => JSON.stringify(l)), ...stderr].slice(-30).join("\n");
  createInterface({ input: child.stderr! }).on("line", (line) => {
    stderr.push(line);
    if (options.inheritOutput) process.stderr.write(`${line}\n`);
  });
  const listening = new Promise<ListeningLine>((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      reject(new Error(`${options.name} did not start within ${timeoutMs} ms\n${describe()}`));
    }, timeoutMs);
    createInterface({ input: child.stdout! }).on("line", (line) => {
      if (options.inheritOutput) process.stdout.write(`${line}\n`);
      let parsed: Record<string, unknown>;
      try {
        parsed = JSON.parse(line) as Record<string, unknown>;
      } catch {
        parsed = { msg: line, unparsed: true };
      }
      logs.push(parsed);
      if (parsed.msg === "listening") {
        clearTimeout(timer);
        resolve(parsed as ListeningLine);
      }
    });
    void exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`${options.name} exited (${code}) before listening\n${describe()}`));
    });
  });
  // Callers that stop a process before it listens need not await this.
  listening.catch(() => undefined);
  return {
    name: options.name,
    child,
    pid: child.pid ?? -1,
    listening,
    logs,
    stderr,
    exited,
    stop(signal = "SIGTERM") {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      return exited;
    },
  };
}

/**
 * Spawns one service and waits for its "listening" log line, which carries the ports it bound
 * (port 0 in tests means "any free port").
 */
export async function startServiceProcess(options: StartOptions): Promise<ServiceProcess> {
  const spawned = spawnServiceProcess(options);
  return { ...spawned, listening: await spawned.listening };
}

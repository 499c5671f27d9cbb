import { spawn, type ChildProcess } from "node:child_process";
import { createInterface } from "node:readline";

/** The JSON log line a service prints once it is bound, with the ports it got. */
export interface ListeningLine {
  msg: "listening";
  service: string;
  [key: string]: unknown;
}

export interface ServiceProcess {
  name: string;
  child: ChildProcess;
  listening: ListeningLine;
  /** Every stdout line so far, parsed when it was JSON (logs are JSON lines). */
  logs: Record<string, unknown>[];
  stderr: string[];
  /** Resolves with the exit code (or signal name) once the process has exited. */
  exited: Promise<number | string>;
  stop(signal?: NodeJS.Signals): Promise<number | string>;
}

export interface StartOptions {
  name: string;
  /** Path of the compiled entry point (…/dist/src/main.js). */
  entry: string;
  env: Record<string, string>;
  timeoutMs?: number;
  /** Copy the child's output to this process's stdout / stderr (npm start does; tests do not). */
  inheritOutput?: boolean;
}

/**
 * Spawns one service as its own Node process and waits for its "listening" log line, which
 * carries the ports it bound (port 0 in tests means "any free port").
 */
export function startServiceProcess(options: StartOptions): Promise<ServiceProcess> {
  const child = spawn(process.execPath, [options.entry], {
    env: { PATH: process.env.PATH ?? "", ...options.env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  const logs: Record<string, unknown>[] = [];
  const stderr: string[] = [];
  const exited = new Promise<number | string>((resolve) =>
    child.once("exit", (code, signal) => resolve(code ?? signal ?? "unknown")),
  );
  createInterface({ input: child.stderr }).on("line", (line) => {
    stderr.push(line);
    if (options.inheritOutput) process.stderr.write(`${line}\n`);
  });
  return new Promise<ServiceProcess>((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      reject(new Error(`${options.name} did not start within ${options.timeoutMs ?? 20_000} ms\n${describe()}`));
    }, options.timeoutMs ?? 20_000);
    const describe = () => [...logs.map((l) => JSON.stringify(l)), ...stderr].slice(-30).join("\n");
    createInterface({ input: child.stdout }).on("line", (line) => {
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
        resolve({
          name: options.name,
          child,
          listening: parsed as ListeningLine,
          logs,
          stderr,
          exited,
          stop(signal = "SIGTERM") {
            if (child.exitCode === null && child.signalCode === null) child.kill(signal);
            return exited;
          },
        });
      }
    });
    void exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`${options.name} exited (${code}) before listening\n${describe()}`));
    });
  });
}

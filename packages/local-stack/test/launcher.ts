/**
 * Runs the local stack's launcher (`npm start`'s `main.js`, or `npm start` itself) for tests,
 * collecting its output lines. Every stack gets `namespace` as its NATS_NAMESPACE unless the
 * environment given says otherwise.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { ANY_PORTS } from "../src/stack-environment.js";

export const repo = join(import.meta.dirname, "..", "..", "..");
export const launcher = join(import.meta.dirname, "..", "dist", "src", "main.js");
export const adminCli = join(repo, "services", "gateway", "dist", "src", "cli", "admin.js");

export const anyPorts = ANY_PORTS;

/** A running launcher (or `npm start`) whose output lines are collected as they come. */
export interface Running {
  child: ChildProcess;
  lines: string[];
  exited: Promise<number | null>;
  /** Resolves with the first line (so far or to come) matching `pattern`; rejects on exit or timeout. */
  waitForLine(pattern: RegExp, timeoutMs?: number): Promise<RegExpExecArray>;
}

export function runLauncher(command: string, args: string[], env: Record<string, string>, namespace: string): Running {
  const child = spawn(command, args, {
    cwd: repo,
    env: { NATS_NAMESPACE: namespace, ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  const lines: string[] = [];
  const waiters = new Set<() => void>();
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
  const onLine = (line: string) => {
    lines.push(line);
    for (const check of waiters) check();
  };
  createInterface({ input: child.stdout }).on("line", onLine);
  createInterface({ input: child.stderr }).on("line", onLine);
  return {
    child,
    lines,
    exited,
    waitForLine(pattern, timeoutMs = 60_000) {
      return new Promise((resolve, reject) => {
        const check = () => {
          for (const line of lines) {
            const match = pattern.exec(line);
            if (match) {
              waiters.delete(check);
              clearTimeout(timer);
              return resolve(match);
            }
          }
        };
        const timer = setTimeout(() => {
          waiters.delete(check);
          reject(new Error(`no line matching ${String(pattern)} in time:\n${lines.join("\n")}`));
        }, timeoutMs);
        waiters.add(check);
        check();
        void exited.then((code) => {
          if (!waiters.has(check)) return;
          waiters.delete(check);
          clearTimeout(timer);
          reject(new Error(`exited ${code} before a line matching ${String(pattern)}:\n${lines.join("\n")}`));
        });
      });
    },
  };
}

/** Runs `npm start`'s launcher until it says the gateway is ready; returns its URL and a stop. */
export async function launch(env: Record<string, string>, namespace: string) {
  const running = runLauncher(
    process.execPath,
    [launcher],
    {
      PATH: process.env.PATH ?? "",
      ...anyPorts,
      LOG_LEVEL: "warn",
      ...env,
    },
    namespace,
  );
  const url = (await running.waitForLine(/^\[stack\] Gateway ready at (\S+)$/))[1]!;
  return {
    ...running,
    url,
    async stop() {
      running.child.kill("SIGTERM");
      return running.exited;
    },
  };
}

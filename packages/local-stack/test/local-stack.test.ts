import { spawn } from "node:child_process";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { afterAll, describe, expect, it } from "vitest";
import { createScratchDatabase, type ScratchDatabase } from "../src/postgres-databases.js";

const launcher = join(import.meta.dirname, "..", "dist", "src", "main.js");
const anyPorts = Object.fromEntries(
  [
    "PORT",
    "CATALOG_GRPC_PORT",
    "NOTIFY_GRPC_PORT",
    "WEBHOOKS_GRPC_PORT",
    "GATEWAY_METRICS_PORT",
    "CATALOG_METRICS_PORT",
    "NOTIFY_METRICS_PORT",
    "WEBHOOKS_METRICS_PORT",
  ].map((name) => [name, "0"]),
);

/** Runs `npm start`'s launcher until it says the gateway is ready; returns its URL and a stop. */
async function launch(env: Record<string, string>) {
  const child = spawn(process.execPath, [launcher], {
    env: { PATH: process.env.PATH ?? "", ...anyPorts, LOG_LEVEL: "warn", ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  const lines: string[] = [];
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`not ready in time:\n${lines.join("\n")}`)), 60_000);
    createInterface({ input: child.stdout }).on("line", (line) => {
      lines.push(line);
      const ready = /^\[stack\] Gateway ready at (\S+)$/.exec(line);
      if (ready) {
        clearTimeout(timer);
        resolve(ready[1]!);
      }
    });
    createInterface({ input: child.stderr }).on("line", (line) => lines.push(line));
    void exited.then((code) => reject(new Error(`launcher exited ${code}:\n${lines.join("\n")}`)));
  });
  return {
    url,
    lines,
    async stop() {
      child.kill("SIGTERM");
      return exited;
    },
  };
}

describe("npm start (the local stack launcher)", () => {
  const cleanups: (() => Promise<unknown>)[] = [];
  afterAll(async () => {
    for (const cleanup of cleanups.reverse()) await cleanup();
  });

  it("starts all four services on the given database, is ready, and stops them all on SIGTERM", async () => {
    const scratch: ScratchDatabase = await createScratchDatabase("stack");
    cleanups.push(() => scratch.drop());
    const dataDir = await mkdtemp(join(tmpdir(), "stack-"));
    cleanups.push(() => rm(dataDir, { recursive: true, force: true }));
    const stack = await launch({ DATABASE_URL: scratch.url, STACK_DATA_DIR: dataDir });
    const ready = await fetch(`${stack.url}/readyz`);
    expect(ready.status).toBe(200);
    expect(await ready.json()).toMatchObject({ checks: { catalog: "SERVING", notify: "SERVING" } });
    const stackEnv = await readFile(join(dataDir, "stack.env"), "utf8");
    expect(stackEnv).toContain(`DATABASE_URL=${scratch.url}`);
    expect(stackEnv).toMatch(/NOTIFY_ADDR=127\.0\.0\.1:\d+/);
    expect((await readFile(join(dataDir, "secrets.key"), "utf8")).trim()).toMatch(/^[A-Za-z0-9+/]{43}=$/);
    expect(await stack.stop()).toBe(0);
    await expect(fetch(`${stack.url}/healthz`)).rejects.toThrow();
  });

  it("falls back to an embedded Postgres when none is configured or answering", async () => {
    const dataDir = await mkdtemp(join(tmpdir(), "stack-embedded-"));
    cleanups.push(() => rm(dataDir, { recursive: true, force: true }));
    const stack = await launch({
      STACK_DATA_DIR: dataDir,
      STACK_POSTGRES_PROBE_URL: "postgres://postgres@127.0.0.1:1/postgres",
      STACK_EMBEDDED_PG_PORT: "0", // any free port, chosen by the kernel
    });
    try {
      const postgresLine = stack.lines.find((line) => line.startsWith("[stack] Postgres: "));
      expect(postgresLine).toMatch(/^\[stack\] Postgres: an embedded Postgres on port [1-9]\d*$/);
      // Ready once the gateway's first health checks of catalog and notify (1 s deadline each)
      // have answered in time, which on a busy machine can take more than one try.
      const readiness = async () => {
        const response = await fetch(`${stack.url}/readyz`);
        return `${response.status} ${await response.text()}`; // the checks, should it never become ready
      };
      await expect.poll(readiness, { timeout: 20_000, interval: 250 }).toMatch(/^200 /);
    } finally {
      expect(await stack.stop()).toBe(0);
    }
  }, 90_000);
});

import { execFile, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { promisify } from "node:util";
import { createScratchDatabase } from "@platform/local-stack/postgres-databases";
import { deleteNamespaceStreams, newNatsNamespace, testNatsUrl } from "@platform/local-stack/nats-namespace";

const run = promisify(execFile);
const repo = join(import.meta.dirname, "..", "..", "..");
/** `npm start`'s entry: the local stack's launcher (packages/local-stack/src/main.ts). */
const launcher = join(repo, "packages", "local-stack", "dist", "src", "main.js");
const adminCli = join(repo, "services", "gateway", "dist", "src", "cli", "admin.js");

/** A port nothing listens on right now (the launcher needs the gRPC ports up front for the CLI). */
async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

export interface NpmStartStack {
  url: string;
  /** Runs the admin CLI against this stack; resolves with its parsed JSON output. */
  admin(...args: string[]): Promise<Record<string, unknown>>;
  stop(): Promise<void>;
}

/**
 * The four services started the way `npm start` starts them (its launcher, every service a
 * process on 127.0.0.1, the environment passed through), over a scratch database and a NATS
 * namespace of the test's own, on free ports; ready when the launcher prints the gateway's URL.
 */
export async function startNpmStartStack(env: Record<string, string>): Promise<NpmStartStack> {
  const scratch = await createScratchDatabase("console");
  const namespace = newNatsNamespace();
  const dataDir = await mkdtemp(join(tmpdir(), "console-stack-"));
  const [port, notifyPort, webhooksPort, catalogPort] = await Promise.all([
    freePort(),
    freePort(),
    freePort(),
    freePort(),
  ]);
  const child = spawn(process.execPath, [launcher], {
    cwd: repo,
    env: {
      PATH: process.env.PATH ?? "",
      DATABASE_URL: scratch.url,
      NATS_URL: testNatsUrl(),
      NATS_NAMESPACE: namespace,
      STACK_DATA_DIR: dataDir,
      SECRETS_KEY: randomBytes(32).toString("base64"),
      LOG_LEVEL: "warn",
      PORT: String(port),
      CATALOG_GRPC_PORT: String(catalogPort),
      NOTIFY_GRPC_PORT: String(notifyPort),
      WEBHOOKS_GRPC_PORT: String(webhooksPort),
      GATEWAY_METRICS_PORT: "0",
      CATALOG_METRICS_PORT: "0",
      NOTIFY_METRICS_PORT: "0",
      WEBHOOKS_METRICS_PORT: "0",
      ...env,
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  const lines: string[] = [];
  const exited = new Promise<number | null>((resolve) => child.once("exit", resolve));
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`npm start was not ready in 60 s:\n${lines.join("\n")}`)), 60_000);
    const onLine = (line: string) => {
      lines.push(line);
      const ready = /^\[stack\] Gateway ready at (\S+)$/.exec(line);
      if (ready) {
        clearTimeout(timer);
        resolve(ready[1]!);
      }
    };
    createInterface({ input: child.stdout }).on("line", onLine);
    createInterface({ input: child.stderr }).on("line", onLine);
    void exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`npm start exited ${code} before it was ready:\n${lines.join("\n")}`));
    });
  });
  return {
    url,
    async admin(...args) {
      const { stdout } = await run(process.execPath, [adminCli, ...args], {
        env: {
          PATH: process.env.PATH ?? "",
          DATABASE_URL: scratch.url,
          NOTIFY_ADDR: `127.0.0.1:${notifyPort}`,
          WEBHOOKS_ADDR: `127.0.0.1:${webhooksPort}`,
        },
      });
      return JSON.parse(stdout) as Record<string, unknown>;
    },
    async stop() {
      child.kill("SIGTERM");
      await exited;
      await deleteNamespaceStreams(namespace);
      await scratch.drop();
      await rm(dataDir, { recursive: true, force: true });
    },
  };
}

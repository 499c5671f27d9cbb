import { spawn, type ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import { existsSync } from "node:fs";
import { mkdir, readFile, writeFile } from "node:fs/promises";
import { connect } from "node:net";
import { join } from "node:path";
import pg from "pg";
import { EmbeddedPostgresError, startEmbeddedPostgres, type EmbeddedPostgres } from "./embedded-postgres.js";
import { ensureDatabase } from "./postgres-databases.js";

/** The database every local service shares (each in its own schema). */
export const LOCAL_DATABASE = "platform";

export interface Provisioned {
  url: string;
  /** Where it came from, for the start-up message. */
  source: string;
  stop(): Promise<void>;
}

/** True when something accepts TCP connections on host:port within timeoutMs. */
export function answers(host: string, port: number, timeoutMs = 500): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host, port });
    const done = (ok: boolean) => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(timeoutMs, () => done(false));
    socket.once("connect", () => done(true));
    socket.once("error", () => done(false));
  });
}

async function postgresAnswers(url: string): Promise<boolean> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 1_000 });
  try {
    await client.connect();
    await client.query("select 1");
    return true;
  } catch {
    return false;
  } finally {
    await client.end().catch(() => undefined);
  }
}

/**
 * DATABASE_URL when set; else the Postgres on probeUrl (127.0.0.1:5432) when it answers, with the
 * database `platform` created if missing; else an embedded Postgres with its data under
 * dataDir/postgres (kept between runs; as root in a private directory, where that links to)
 * on embeddedPort (0: any free port).
 */
export async function provisionPostgres(options: {
  databaseUrl: string | undefined;
  probeUrl: string;
  dataDir: string;
  embeddedPort: number;
  log: (line: string) => void;
}): Promise<Provisioned> {
  if (options.databaseUrl) return { url: options.databaseUrl, source: "DATABASE_URL", stop: async () => {} };
  if (await postgresAnswers(options.probeUrl)) {
    const url = await ensureDatabase(options.probeUrl, LOCAL_DATABASE);
    return { url, source: `the Postgres at ${new URL(options.probeUrl).host}`, stop: async () => {} };
  }
  let server: EmbeddedPostgres;
  try {
    server = await startEmbeddedPostgres({
      databaseDir: join(options.dataDir, "postgres"),
      port: options.embeddedPort,
      onInitialise: (databaseDir) => options.log(`initialising an embedded Postgres in ${databaseDir}`),
      onNotice: options.log,
    });
  } catch (error) {
    if (error instanceof EmbeddedPostgresError && error.portInUse) {
      throw new Error(
        `port ${options.embeddedPort} is already in use: stop what uses it or set STACK_EMBEDDED_PG_PORT ` +
          "(0 for any free port)",
        { cause: error },
      );
    }
    throw error;
  }
  const url = await ensureDatabase(server.url, LOCAL_DATABASE);
  return { url, source: `an embedded Postgres on port ${server.port}`, stop: () => server.stop() };
}

/**
 * NATS_URL when set; else the NATS on 127.0.0.1:4222 when it answers; else `nats-server -js`
 * from PATH on 127.0.0.1:fallbackPort with its store under dataDir/nats; else none (said so).
 */
export async function provisionNats(options: {
  natsUrl: string | undefined;
  dataDir: string;
  fallbackPort: number;
  log: (line: string) => void;
}): Promise<Provisioned | undefined> {
  if (options.natsUrl) return { url: options.natsUrl, source: "NATS_URL", stop: async () => {} };
  if (await answers("127.0.0.1", 4222)) {
    return { url: "nats://127.0.0.1:4222", source: "the NATS at 127.0.0.1:4222", stop: async () => {} };
  }
  const storeDir = join(options.dataDir, "nats");
  await mkdir(storeDir, { recursive: true });
  let child: ChildProcess;
  try {
    child = await new Promise<ChildProcess>((resolve, reject) => {
      const started = spawn(
        "nats-server",
        ["-js", "-a", "127.0.0.1", "-p", String(options.fallbackPort), "-sd", storeDir],
        // Its own process group, like the embedded Postgres: stopped by the supervisor, after the services.
        { stdio: "ignore", detached: true },
      );
      started.once("error", reject);
      started.once("spawn", () => resolve(started));
    });
  } catch {
    options.log(
      "no NATS found: set NATS_URL, start one on 127.0.0.1:4222, or install nats-server (JetStream) on your PATH; " +
        "continuing without it (no service needs it yet)",
    );
    return undefined;
  }
  for (let i = 0; i < 50 && !(await answers("127.0.0.1", options.fallbackPort)); i++) {
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return {
    url: `nats://127.0.0.1:${options.fallbackPort}`,
    source: `a nats-server -js on port ${options.fallbackPort}`,
    stop: () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null) return resolve();
        child.once("exit", () => resolve());
        child.kill("SIGTERM");
      }),
  };
}

/** SECRETS_KEY when set; else a key generated once into dataDir/secrets.key and reused. */
export async function provisionSecretsKey(secretsKey: string | undefined, dataDir: string): Promise<string> {
  if (secretsKey) return secretsKey;
  const file = join(dataDir, "secrets.key");
  if (existsSync(file)) return (await readFile(file, "utf8")).trim();
  const key = randomBytes(32).toString("base64");
  await writeFile(file, `${key}\n`, { mode: 0o600 });
  return key;
}

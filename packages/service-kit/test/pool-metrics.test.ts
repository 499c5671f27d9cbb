import { createScratchDatabase, type ScratchDatabase } from "@platform/local-stack/postgres-databases";
import pg from "pg";
import { Registry } from "prom-client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { knexPoolProbe, pgPoolProbe, registerDatabasePoolMetrics } from "../src/pool-metrics.js";
import { createDatabase, type Knex } from "../src/postgres.js";

/** The samples of one metric as `labels -> value`, from the text exposition. */
async function samples(registry: Registry, name: string): Promise<Record<string, number>> {
  const text = await registry.metrics();
  const found: Record<string, number> = {};
  for (const line of text.split("\n")) {
    const match = new RegExp(`^${name}\\{([^}]*)\\} (\\S+)$`).exec(line);
    if (match) found[match[1]!] = Number(match[2]);
  }
  return found;
}

async function eventually(what: string, check: () => Promise<boolean>, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

describe("database pool gauges (real Postgres)", () => {
  let scratch: ScratchDatabase;
  let db: Knex;
  let pool: pg.Pool;
  const registry = new Registry();

  beforeAll(async () => {
    scratch = await createScratchDatabase("poolmetrics");
    db = createDatabase({ url: scratch.url, schema: "public", poolMax: 2 });
    pool = new pg.Pool({ connectionString: scratch.url, max: 3 });
    registerDatabasePoolMetrics(registry, { main: knexPoolProbe(db), send: pgPoolProbe(pool) });
  });
  afterAll(async () => {
    await pool?.end();
    await db?.destroy();
    await scratch?.drop();
  });

  it("start at zero used connections, with the configured maximum of each pool", async () => {
    expect(await samples(registry, "db_pool_connections")).toEqual({
      'pool="main",state="used"': 0,
      'pool="main",state="idle"': 0,
      'pool="send",state="used"': 0,
      'pool="send",state="idle"': 0,
    });
    expect(await samples(registry, "db_pool_max_connections")).toEqual({ 'pool="main"': 2, 'pool="send"': 3 });
    expect(await samples(registry, "db_pool_pending_acquires")).toEqual({ 'pool="main"': 0, 'pool="send"': 0 });
  });

  it("count the knex pool's lent connections and the callers waiting when all are lent", async () => {
    // Two transactions hold both connections of the main pool; a third query waits for one.
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    const holders = [1, 2].map(() =>
      db.transaction(async (trx) => {
        await trx.raw("select 1");
        await held;
      }),
    );
    await eventually(
      "both connections lent",
      async () => (await samples(registry, "db_pool_connections"))['pool="main",state="used"'] === 2,
    );
    // knex builders are lazy: then() sends the query.
    const waiter = db.raw("select 1").then(() => undefined);
    await eventually(
      "one waiter",
      async () => (await samples(registry, "db_pool_pending_acquires"))['pool="main"'] === 1,
    );
    expect((await samples(registry, "db_pool_connections"))['pool="main",state="idle"']).toBe(0);
    release();
    await Promise.all([...holders, waiter]);
    expect(await samples(registry, "db_pool_pending_acquires")).toEqual({ 'pool="main"': 0, 'pool="send"': 0 });
    const after = await samples(registry, "db_pool_connections");
    expect(after['pool="main",state="used"']).toBe(0);
    expect(after['pool="main",state="idle"']).toBe(2);
  });

  it("count a pg pool's lent, idle and waiting connections", async () => {
    const clients = await Promise.all([pool.connect(), pool.connect(), pool.connect()]);
    const waiting = pool.connect();
    await eventually(
      "one pg waiter",
      async () => (await samples(registry, "db_pool_pending_acquires"))['pool="send"'] === 1,
    );
    expect((await samples(registry, "db_pool_connections"))['pool="send",state="used"']).toBe(3);
    clients[0].release();
    const fourth = await waiting;
    clients[1].release();
    const now = await samples(registry, "db_pool_connections");
    expect([now['pool="send",state="used"'], now['pool="send",state="idle"']]).toEqual([2, 1]);
    clients[2].release();
    fourth.release();
  });

  it("drop a destroyed knex pool's series instead of reporting stale values", async () => {
    const other = createDatabase({ url: scratch.url, schema: "public", poolMax: 5 });
    const alone = new Registry();
    registerDatabasePoolMetrics(alone, { main: knexPoolProbe(other) });
    expect(await samples(alone, "db_pool_max_connections")).toEqual({ 'pool="main"': 5 });
    await other.destroy();
    expect(await samples(alone, "db_pool_max_connections")).toEqual({});
  });
});

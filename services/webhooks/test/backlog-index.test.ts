/**
 * The backlog gauges read only the unfinished deliveries, through `deliveries_backlog_idx`
 * (migration 20261127190000), never a scan of every delivery (bench:growth: 1.98 s at 10 million
 * before the index, every WEBHOOKS_BACKLOG_INTERVAL on every replica).
 */
import { createScratchDatabase, type ScratchDatabase } from "@platform/local-stack/postgres-databases";
import { createDatabase, migrateToLatest, type Knex } from "@platform/service-kit/postgres";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { migrations } from "../migrations/index.js";
import { WEBHOOKS_SCHEMA, WEBHOOKS_SEARCH_PATH } from "../src/config.js";
import { BACKLOG_QUERY, measureBacklog } from "../src/db/delivery-backlog.js";

describe("the backlog gauges' statement", () => {
  let scratch: ScratchDatabase;
  let db: Knex;

  beforeAll(async () => {
    scratch = await createScratchDatabase("backlog_idx");
    db = createDatabase({ url: scratch.url, schema: WEBHOOKS_SCHEMA, searchPath: WEBHOOKS_SEARCH_PATH, poolMax: 1 });
    await migrateToLatest(db, WEBHOOKS_SCHEMA, migrations);
  });
  afterAll(async () => {
    await db?.destroy();
    await scratch?.drop();
  });

  it("reads the deliveries through deliveries_backlog_idx, not a scan of the table", async () => {
    const plan = await db.transaction(async (trx) => {
      // The tables are empty here; with sequential scans priced out, the plan shows what can serve it.
      await trx.raw("set local enable_seqscan = off");
      const explained = await trx.raw<{ rows: { "QUERY PLAN": string }[] }>(`explain ${BACKLOG_QUERY}`);
      return explained.rows.map((row) => row["QUERY PLAN"]).join("\n");
    });
    // Each day partition (and the default one) is read through its copy of deliveries_backlog_idx.
    const used = [...plan.matchAll(/(?:Bitmap Index Scan on|Index (?:Only )?Scan using) (\S+)/g)]
      .map((m) => m[1]!)
      .filter((index) => index !== "endpoints_pkey");
    const parents = await db.raw<{ rows: { parent: string }[] }>(
      `select p.relname as parent from pg_class c join pg_inherits i on i.inhrelid = c.oid
         join pg_class p on p.oid = i.inhparent where c.relname = any(?) order by c.relname`,
      [used],
    );
    const partitions = await db.raw<{ rows: unknown[] }>(
      "select 1 from pg_inherits where inhparent = 'webhooks_history.deliveries'::regclass",
    );
    expect(used).toHaveLength(partitions.rows.length);
    expect(parents.rows).toEqual(used.map(() => ({ parent: "deliveries_backlog_idx" })));
    expect(plan).not.toMatch(/Seq Scan on deliveries/);
    expect(await measureBacklog(db)).toEqual({
      healthy: { pending: 0, endpoints: 0, oldestAgeSeconds: null },
      failing: { pending: 0, endpoints: 0, oldestAgeSeconds: null },
      paused: { pending: 0, endpoints: 0, oldestAgeSeconds: null },
    });
  });
});

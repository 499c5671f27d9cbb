/**
 * Migration 20261128100000 builds the message log's by-type index partition by partition,
 * concurrently, and attaches each to the parent's. Run again after an interrupted build, it
 * replaces the partition's index the build left invalid, so the parent's index ends valid.
 */
import { createScratchDatabase, type ScratchDatabase } from "@platform/local-stack/postgres-databases";
import { createDatabase, migrateToLatest, type Knex } from "@platform/service-kit/postgres";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import * as typeLogIndex from "../migrations/20261128100000_deliveries_type_log_idx.js";
import { migrations } from "../migrations/index.js";
import { WEBHOOKS_SCHEMA, WEBHOOKS_SEARCH_PATH } from "../src/config.js";

describe("the by-type index migration", () => {
  let scratch: ScratchDatabase;
  let db: Knex;

  beforeAll(async () => {
    scratch = await createScratchDatabase("type_log");
    db = createDatabase({ url: scratch.url, schema: WEBHOOKS_SCHEMA, searchPath: WEBHOOKS_SEARCH_PATH, poolMax: 2 });
    await migrateToLatest(db, WEBHOOKS_SCHEMA, migrations);
  });
  afterAll(async () => {
    await db?.destroy();
    await scratch?.drop();
  });

  /** Each by-type index (the parent's and every partition's) and whether Postgres can use it. */
  const indexes = async () =>
    (
      await db.raw<{ rows: { name: string; valid: boolean }[] }>(
        `select c.relname as name, i.indisvalid as valid from pg_index i join pg_class c on c.oid = i.indexrelid
          where c.relnamespace = 'webhooks_history'::regnamespace
            and (c.relname = 'deliveries_type_log_idx' or c.relname like 'deliveries%type_log_idx')
          order by 1`,
      )
    ).rows;

  it("gives every partition the index, and builds again the one an interrupted build left invalid", async () => {
    const partitions = (
      await db.raw<{ rows: unknown[] }>(
        "select 1 from pg_inherits where inhparent = 'webhooks_history.deliveries'::regclass",
      )
    ).rows.length;
    const built = await indexes();
    expect(built).toHaveLength(partitions + 1);
    expect(built.every((index) => index.valid)).toBe(true);

    // What an interrupted run leaves: the parent's index invalid, a partition's index built
    // halfway (invalid, not attached), the other partitions without one.
    const victim = built.find((index) => index.name !== "deliveries_type_log_idx")!.name;
    const partition = victim.replace(/_type_log_idx$/, "");
    await db.raw("drop index webhooks_history.deliveries_type_log_idx");
    await db.raw(
      "create index if not exists deliveries_type_log_idx on only webhooks_history.deliveries (tenant_id, event_type, seq desc)",
    );
    await db.raw("create index ?? on ?? (tenant_id, event_type, seq desc)", [victim, `webhooks_history.${partition}`]);
    await db.raw("update pg_index set indisvalid = false where indexrelid = ?::regclass", [
      `webhooks_history.${victim}`,
    ]);
    expect(await indexes()).toEqual(
      [
        { name: "deliveries_type_log_idx", valid: false },
        { name: victim, valid: false },
      ].sort((a, b) => a.name.localeCompare(b.name)),
    );

    await typeLogIndex.up(db);
    const after = await indexes();
    expect(after).toHaveLength(partitions + 1);
    expect(after.filter((index) => !index.valid)).toEqual([]);
  });
});

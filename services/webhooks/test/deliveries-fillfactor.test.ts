/**
 * Migration 20261128150000: the deliveries' day partitions keep a tenth of each page free, so a
 * delivery's update lands on the page its row was inserted on instead of another (each page's
 * first change after a checkpoint writes the whole page to the WAL: bench:growth at 10 million).
 */
import { createScratchDatabase, type ScratchDatabase } from "@platform/local-stack/postgres-databases";
import { createDatabase, migrateToLatest, type Knex } from "@platform/service-kit/postgres";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import * as fillfactor from "../migrations/20261128150000_deliveries_fillfactor.js";
import { migrations } from "../migrations/index.js";
import { WEBHOOKS_SCHEMA, WEBHOOKS_SEARCH_PATH } from "../src/config.js";

const DAY_MS = 86_400_000;
const TENANT = `ten_${"2".repeat(24)}`;
const ENDPOINT = `ep_${"2".repeat(24)}`;

describe("the deliveries' fillfactor", () => {
  let scratch: ScratchDatabase;
  let db: Knex;
  const day = (daysAhead: number) => new Date(Date.now() + daysAhead * DAY_MS).toISOString().slice(0, 10);

  beforeAll(async () => {
    scratch = await createScratchDatabase("fillfactor");
    db = createDatabase({ url: scratch.url, schema: WEBHOOKS_SCHEMA, searchPath: WEBHOOKS_SEARCH_PATH, poolMax: 2 });
    await migrateToLatest(db, WEBHOOKS_SCHEMA, migrations);
    await db.raw(
      `insert into webhooks.endpoints (id, tenant_id, url, description, event_types, api_version, secret_sealed)
       values (?, ?, 'https://example.test/hook', '', array['pet.*'], '2026-11-01', 'v1.x')`,
      [ENDPOINT, TENANT],
    );
  });
  afterAll(async () => {
    await db?.destroy();
    await scratch?.drop();
  });

  /** Each history partition's fillfactor (null: Postgres's default, 100). */
  const fillfactors = async () =>
    Object.fromEntries(
      (
        await db.raw<{ rows: { name: string; fillfactor: string | null }[] }>(
          `select c.relname as name,
                  (select split_part(o, '=', 2) from unnest(c.reloptions) o where o like 'fillfactor=%') as fillfactor
             from pg_inherits i join pg_class c on c.oid = i.inhrelid
            where i.inhparent in ('webhooks_history.deliveries'::regclass, 'webhooks_history.events'::regclass,
                                  'webhooks_history.attempts'::regclass)`,
        )
      ).rows.map((row) => [row.name, row.fillfactor]),
    );

  /** A day's deliveries of about the production row's size, its page numbers before and after an update. */
  async function updateOnePerPage(partitionDay: string): Promise<{ pages: number; moved: number }> {
    const start = `${partitionDay}T00:00:00Z`;
    await db.raw(
      `insert into deliveries (id, tenant_id, endpoint_id, event_id, event_type, livemode, payload, status,
                               next_attempt_at, created_at)
       select 'dlv_' || lpad(n::text, 20, '0') || left(md5(?), 4), ?, ?, 'evt_' || lpad(n::text, 24, '0'),
              'pet.created', true, repeat('x', 560), 'pending', now(), ?::timestamptz + n * interval '1 ms'
         from generate_series(1, 200) n`,
      [partitionDay, TENANT, ENDPOINT, start],
    );
    const pageOf = async () =>
      new Map(
        (
          await db.raw<{ rows: { id: string; page: string }[] }>(
            "select id, (ctid::text::point)[0]::text as page from deliveries where created_at >= ? and created_at < ?::timestamptz + interval '1 day'",
            [start, start],
          )
        ).rows.map((row) => [row.id, row.page]),
      );
    const before = await pageOf();
    // The first row of each page, as the pipeline settles it: status, next attempt, time.
    const firstOfPage = new Map<string, string>();
    for (const [id, page] of before) if (!firstOfPage.has(page)) firstOfPage.set(page, id);
    for (const id of firstOfPage.values()) {
      await db.raw(
        "update deliveries set status = 'succeeded', attempts = 1, next_attempt_at = null, updated_at = now() where id = ?",
        [id],
      );
    }
    const after = await pageOf();
    return {
      pages: firstOfPage.size,
      moved: [...firstOfPage.values()].filter((id) => after.get(id) !== before.get(id)).length,
    };
  }

  it("is 90 on every deliveries partition, those made later included; events and attempts keep the default", async () => {
    await db.raw("select webhooks_history.ensure_day_partitions(?::date, ?::date)", [day(10), day(10)]);
    const all = await fillfactors();
    const deliveries = Object.entries(all).filter(([name]) => name.startsWith("deliveries_"));
    expect(deliveries.length).toBeGreaterThan(3);
    expect(deliveries.filter(([, value]) => value !== "90")).toEqual([]);
    expect(all[`deliveries_p${day(10).replaceAll("-", "")}`]).toBe("90");
    expect(Object.entries(all).filter(([name, value]) => !name.startsWith("deliveries_") && value !== null)).toEqual(
      [],
    );
  });

  it("keeps a delivery's update on the page it was inserted on", async () => {
    const { pages, moved } = await updateOnePerPage(day(1));
    expect(pages).toBeGreaterThan(10);
    expect(moved).toBe(0);
  });

  it("down gives the partitions and the partitions made after it Postgres's default again; updates then move", async () => {
    await fillfactor.down(db);
    await db.raw("select webhooks_history.ensure_day_partitions(?::date, ?::date)", [day(11), day(11)]);
    expect(Object.values(await fillfactors()).filter((value) => value !== null)).toEqual([]);
    // A full page has no room: the updated row moves to another page.
    const { pages, moved } = await updateOnePerPage(day(11));
    expect(moved).toBe(pages);
    await fillfactor.up(db);
    expect(Object.values(await fillfactors()).filter((value) => value === "90").length).toBeGreaterThan(3);
  });
});

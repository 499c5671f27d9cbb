/**
 * The message log's first page of one event type (db/ledger-store.ts list) reads today's and
 * yesterday's day partitions first, and the older days only when those two do not hold the page:
 * over every day's partition, each of ~36 by-type indexes is probed, and at 10 million deliveries
 * those probes were reads from disk (bench:growth: p50 9.9 ms against 1.1 on the empty database).
 * Whichever way a page is read, it is the page a read of every day gives.
 */
import { createScratchDatabase, type ScratchDatabase } from "@platform/local-stack/postgres-databases";
import { createDatabase, migrateToLatest, type Knex } from "@platform/service-kit/postgres";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { migrations } from "../migrations/index.js";
import { WEBHOOKS_SCHEMA, WEBHOOKS_SEARCH_PATH } from "../src/config.js";
import { createLedgerStore } from "../src/db/ledger-store.js";

const DAYS = 30;
const TENANT = `ten_${"1".repeat(24)}`;
const ENDPOINT = `ep_${"1".repeat(24)}`;
const DAY_MS = 86_400_000;

interface PlanNode {
  "Relation Name"?: string;
  Plans?: PlanNode[];
}
const relations = (node: PlanNode): string[] => [
  ...(node["Relation Name"] ? [node["Relation Name"]] : []),
  ...(node.Plans ?? []).flatMap(relations),
];

describe("the message log's first page of one event type", () => {
  let scratch: ScratchDatabase;
  let db: Knex;
  const statements: { sql: string; bindings: unknown[] }[] = [];
  const today = new Date(Math.floor(Date.now() / DAY_MS) * DAY_MS);
  /** The partition of the day `daysAgo` before today: deliveries_p20261128. */
  const partitionOf = (daysAgo: number) =>
    `deliveries_p${new Date(today.getTime() - daysAgo * DAY_MS).toISOString().slice(0, 10).replaceAll("-", "")}`;

  beforeAll(async () => {
    scratch = await createScratchDatabase("message_log_recent");
    db = createDatabase({ url: scratch.url, schema: WEBHOOKS_SCHEMA, searchPath: WEBHOOKS_SEARCH_PATH, poolMax: 1 });
    await migrateToLatest(db, WEBHOOKS_SCHEMA, migrations);
    await db.raw("select webhooks_history.ensure_day_partitions(?::date, ?::date)", [
      new Date(today.getTime() - (DAYS + 1) * DAY_MS).toISOString().slice(0, 10),
      new Date(today.getTime() + 3 * DAY_MS).toISOString().slice(0, 10),
    ]);
    await db.raw(
      `insert into webhooks.endpoints (id, tenant_id, url, description, event_types, api_version, secret_sealed)
       values (?, ?, 'https://example.test/hook', '', array['pet.*'], '2026-11-01', 'v1.x')`,
      [ENDPOINT, TENANT],
    );
    // Oldest day first, as deliveries are recorded: seq grows with created_at. Per day `d` days
    // ago: pet.created 30 (a page from today alone), pet.updated 5 (today and yesterday hold 10),
    // pet.deleted 15 on each of the last two days only (21 rows there, the 21st of yesterday),
    // pet.adopted 3 on one day three weeks ago.
    const perDay = (type: string, count: number, days: number[]) =>
      days.flatMap((d) => Array.from({ length: count }, (_, i) => ({ type, d, i })));
    const every = Array.from({ length: DAYS }, (_, k) => DAYS - 1 - k);
    const rows = [
      ...perDay("pet.created", 30, every),
      ...perDay("pet.updated", 5, every),
      ...perDay("pet.deleted", 15, [1, 0]),
      ...perDay("pet.adopted", 3, [21]),
    ].sort((a, b) => b.d - a.d || a.i - b.i);
    await db.raw(
      `insert into deliveries (id, tenant_id, endpoint_id, event_id, event_type, livemode, payload, status, created_at)
       select 'dlv_' || lpad(n::text, 24, '0'), ?, ?, 'evt_' || lpad(n::text, 24, '0'), type, true, '{}', 'succeeded',
              ?::timestamptz - d * interval '1 day' + (n % 1000) * interval '1 second'
         from unnest(?::text[], ?::int[]) with ordinality as r(type, d, n)
        order by n`,
      [TENANT, ENDPOINT, today, rows.map((r) => r.type), rows.map((r) => r.d)],
    );
    await db.raw("analyze");
    db.on("query", (query: { sql: string; bindings: unknown[] }) => statements.push(query));
  });
  afterAll(async () => {
    await db?.destroy();
    await scratch?.drop();
  });

  /**
   * The store's first page, the deliveries statements it ran, and the partitions each plans to
   * read; the page is checked against the one a read of every day gives.
   */
  async function firstPage(eventType: string) {
    statements.length = 0;
    const page = await createLedgerStore(db).list(TENANT, undefined, { limit: 20, afterSeq: undefined, eventType });
    const ran = statements.filter((s) => /from "deliveries"/.test(s.sql));
    const partitions: string[][] = [];
    for (const statement of ran) {
      const explained = await db.raw<{ rows: { "QUERY PLAN": { Plan: PlanNode }[] }[] }>(
        `explain (format json) ${statement.sql.replace(/\$(\d+)/g, "?")}`,
        statement.bindings as readonly Knex.Value[],
      );
      partitions.push(relations(explained.rows[0]!["QUERY PLAN"][0]!.Plan).filter((r) => r.startsWith("deliveries_")));
    }
    const expected = await everyDay(eventType);
    expect(page.deliveries.map((d) => d.id)).toEqual(expected.ids);
    expect(page.nextAfterSeq).toBe(expected.next);
    return { page, partitions };
  }

  /** The page a read of every day gives: the type's 21 greatest seqs. */
  async function everyDay(eventType: string) {
    const { rows } = await db.raw<{ rows: { id: string; seq: string }[] }>(
      `select id, seq from deliveries where tenant_id = ? and event_type = ? order by seq desc limit 21`,
      [TENANT, eventType],
    );
    return { ids: rows.slice(0, 20).map((r) => r.id), next: rows.length > 20 ? rows[19]!.seq : undefined };
  }

  it("reads only today's and yesterday's partitions (and the days ahead) when today holds the page", async () => {
    const { partitions } = await firstPage("pet.created");
    expect(partitions).toHaveLength(1);
    expect(partitions[0]).toContain(partitionOf(0));
    expect(partitions[0]).toContain(partitionOf(1));
    // No day before yesterday: 29 such partitions hold the type's older rows.
    const older = Array.from({ length: DAYS - 2 }, (_, k) => partitionOf(k + 2));
    expect(partitions[0]!.filter((p) => older.includes(p))).toEqual([]);
  });

  it("reads the older days too when the two days hold less than a page, and gives the every-day page", async () => {
    for (const type of ["pet.updated", "pet.adopted"]) {
      const { partitions } = await firstPage(type);
      expect(partitions).toHaveLength(2);
      expect(partitions[1]).toContain(partitionOf(21));
    }
    expect((await firstPage("pet.adopted")).page.deliveries).toHaveLength(3);
  });

  it("reads the older days too when the two days' page ends in yesterday", async () => {
    const { partitions } = await firstPage("pet.deleted");
    expect(partitions).toHaveLength(2);
  });

  it("gives the next page by seq, as before", async () => {
    const first = await createLedgerStore(db).list(TENANT, undefined, {
      limit: 20,
      afterSeq: undefined,
      eventType: "pet.created",
    });
    const second = await createLedgerStore(db).list(TENANT, undefined, {
      limit: 20,
      afterSeq: Number(first.nextAfterSeq),
      eventType: "pet.created",
    });
    const { rows } = await db.raw<{ rows: { id: string }[] }>(
      `select id from deliveries where tenant_id = ? and event_type = 'pet.created' order by seq desc offset 20 limit 20`,
      [TENANT],
    );
    expect(second.deliveries.map((d) => d.id)).toEqual(rows.map((r) => r.id));
  });
});

/**
 * The due sweep (db/due-deliveries.ts bumpOverdueDeliveries, every sweep interval on every
 * replica) runs one prepared statement over every day partition of the history. Postgres keeps a
 * generic plan for it only when that plan is about as cheap as planning each run; with the grace
 * period passed as a parameter the generic plan expected a third of the unfinished deliveries to
 * be overdue, so Postgres planned the statement over all 36 partitions on every sweep (13 ms at 1
 * million deliveries, against 1.1 ms with the plan kept). With the grace written into the
 * statement, the kept plan knows how few are overdue.
 */
import { createScratchDatabase, type ScratchDatabase } from "@platform/local-stack/postgres-databases";
import { createDatabase, migrateToLatest, type Knex } from "@platform/service-kit/postgres";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { migrations } from "../migrations/index.js";
import { WEBHOOKS_SCHEMA, WEBHOOKS_SEARCH_PATH } from "../src/config.js";
import { bumpOverdueDeliveries } from "../src/db/due-deliveries.js";

const DAYS = 30;
const PER_DAY = 6000;

describe("the due sweep's prepared statement", () => {
  let scratch: ScratchDatabase;
  let db: Knex;

  beforeAll(async () => {
    scratch = await createScratchDatabase("due_plan");
    // One connection, so every sweep below runs on the same prepared statement.
    db = createDatabase({ url: scratch.url, schema: WEBHOOKS_SCHEMA, searchPath: WEBHOOKS_SEARCH_PATH, poolMax: 1 });
    await migrateToLatest(db, WEBHOOKS_SCHEMA, migrations);
    await db.raw("select webhooks_history.ensure_day_partitions(current_date - ?::int, current_date + 3)", [DAYS]);
    await db.raw(
      `insert into webhooks.endpoints (id, tenant_id, url, description, event_types, api_version, secret_sealed)
       values ('ep_${"0".repeat(24)}', 'ten_${"0".repeat(24)}', 'https://example.test/hook', '', array['pet.created'],
               '2026-11-01', 'v1.x')`,
    );
    // A month of history (180 000 deliveries), one in fifty awaiting a retry that is not due yet
    // (the next attempt an hour ahead; bench:growth's fill has 2% awaiting a retry), the rest
    // succeeded: nothing is overdue. With fewer rows the two plans cost alike and either is kept.
    await db.raw(
      `insert into deliveries (id, tenant_id, endpoint_id, event_id, event_type, livemode, payload, status,
                               next_attempt_at, created_at)
       select 'dlv_' || lpad(n::text, 24, '0'), 'ten_${"0".repeat(24)}', 'ep_${"0".repeat(24)}',
              'evt_' || lpad(n::text, 24, '0'), 'pet.created', true, '{}',
              case when n % 50 = 0 then 'awaiting_retry' else 'succeeded' end,
              case when n % 50 = 0 then now() + interval '1 hour' end,
              now() - make_interval(secs => (n % ?) * 86400.0 / ? + 60)
         from generate_series(1, ?) n`,
      [DAYS * PER_DAY, PER_DAY, DAYS * PER_DAY],
    );
    await db.raw("analyze");
  });
  afterAll(async () => {
    await db?.destroy();
    await scratch?.drop();
  });

  it("keeps one generic plan: Postgres does not plan it again over every partition on every sweep", async () => {
    for (let i = 0; i < 12; i++) {
      await db
        .transaction(async (trx) => {
          expect(await bumpOverdueDeliveries(trx, { overdueMs: 5 * 60_000, limit: 500 })).toEqual([]);
          await trx.rollback();
        })
        .catch((error: unknown) => {
          if (!(error instanceof Error && /rollback/i.test(error.message))) throw error;
        });
    }
    const { rows } = await db.raw<{ rows: { name: string; generic_plans: string; custom_plans: string }[] }>(
      "select name, generic_plans, custom_plans from pg_prepared_statements where name like 'webhooks_bump_overdue%'",
    );
    expect(rows).toHaveLength(1);
    // Postgres plans the first five runs each (custom plans), then keeps the generic one when it
    // is no dearer than they were: the seven after it.
    expect(Number(rows[0]!.custom_plans)).toBeLessThanOrEqual(5);
    expect(Number(rows[0]!.generic_plans)).toBeGreaterThanOrEqual(7);
  });
});

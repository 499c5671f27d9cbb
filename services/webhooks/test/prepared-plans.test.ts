/**
 * Prepared statements over every day partition of the history keep one plan. Postgres plans a
 * prepared statement's first five runs each, then keeps a generic plan only when it is about as
 * cheap as they were; otherwise it goes on planning every run, over all 36 partitions.
 * - The due sweep (db/due-deliveries.ts bumpOverdueDeliveries, every sweep interval on every
 *   replica): with the grace period passed as a parameter the generic plan expected a third of
 *   the unfinished deliveries to be overdue (a p50 of 9-13 ms a sweep at 1 million deliveries,
 *   against 1.5 with the plan kept). The grace is written into the statement, so the plan knows how few are.
 * - The ledger's and the message log's pages (db/ledger-store.ts list): with `limit $n` the
 *   generic plan expected a tenth of the rows (7-9 ms a page at 1 million, against 3). The page
 *   size is written into the statement.
 */
import { createScratchDatabase, type ScratchDatabase } from "@platform/local-stack/postgres-databases";
import { createDatabase, migrateToLatest, type Knex } from "@platform/service-kit/postgres";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { migrations } from "../migrations/index.js";
import { WEBHOOKS_SCHEMA, WEBHOOKS_SEARCH_PATH } from "../src/config.js";
import { bumpOverdueDeliveries } from "../src/db/due-deliveries.js";
import { createLedgerStore } from "../src/db/ledger-store.js";

const DAYS = 30;
const PER_DAY = 6000;

const TENANT = `ten_${"0".repeat(24)}`;
const ENDPOINT = `ep_${"0".repeat(24)}`;

describe("prepared statements over the day partitions", () => {
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
       values ('${ENDPOINT}', '${TENANT}', 'https://example.test/hook', '', array['pet.created'],
               '2026-11-01', 'v1.x')`,
    );
    // A month of history (180 000 deliveries), one in fifty awaiting a retry that is not due yet
    // (the next attempt an hour ahead; bench:growth's fill has 2% awaiting a retry), the rest
    // succeeded: nothing is overdue. With fewer rows the two plans cost alike and either is kept.
    await db.raw(
      `insert into deliveries (id, tenant_id, endpoint_id, event_id, event_type, livemode, payload, status,
                               next_attempt_at, created_at)
       select 'dlv_' || lpad(n::text, 24, '0'), '${TENANT}', '${ENDPOINT}',
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

  /** The prepared statements named like `pattern`: how many runs were planned each, and how many used the kept plan. */
  const plans = async (pattern: string) =>
    (
      await db.raw<{ rows: { generic_plans: string; custom_plans: string }[] }>(
        "select generic_plans, custom_plans from pg_prepared_statements where name like ? or statement like ?",
        [pattern, pattern],
      )
    ).rows.map((row) => ({ generic: Number(row.generic_plans), custom: Number(row.custom_plans) }));

  it("the due sweep keeps one generic plan: Postgres does not plan it again over every partition on every sweep", async () => {
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
    // The first five runs planned each, the seven after them on the kept plan.
    expect(await plans("webhooks_bump_overdue%")).toEqual([{ custom: 5, generic: 7 }]);
  });

  it("an endpoint's ledger page and the tenant's message log keep one generic plan each", async () => {
    const store = createLedgerStore(db);
    for (let i = 0; i < 12; i++) {
      expect((await store.list(TENANT, ENDPOINT, { limit: 20, afterSeq: undefined })).deliveries).toHaveLength(20);
      expect((await store.list(TENANT, undefined, { limit: 20, afterSeq: undefined })).deliveries).toHaveLength(20);
    }
    const pages = await plans("%from %deliveries% order by %seq% desc%");
    expect(pages).toEqual([
      { custom: 5, generic: 7 },
      { custom: 5, generic: 7 },
    ]);
  });
});

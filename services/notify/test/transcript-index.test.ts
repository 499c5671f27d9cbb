/**
 * A send's outcome finds its transcript entry by notification id through an index, not by reading
 * the whole transcript (migration 20261127190000; bench:growth found the scan: a send's p50 went
 * from 16.6 to 516 ms at 3 million notifications).
 */
import { createScratchDatabase, type ScratchDatabase } from "@platform/local-stack/postgres-databases";
import { createDatabase, migrateToLatest, type Knex } from "@platform/service-kit/postgres";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { migrations } from "../migrations/index.js";
import { NOTIFY_SCHEMA } from "../src/config.js";

describe("the transcript entry of a notification", () => {
  let scratch: ScratchDatabase;
  let db: Knex;

  beforeAll(async () => {
    scratch = await createScratchDatabase("transcript_idx");
    db = createDatabase({ url: scratch.url, schema: NOTIFY_SCHEMA, poolMax: 1 });
    await migrateToLatest(db, NOTIFY_SCHEMA, migrations);
  });
  afterAll(async () => {
    await db?.destroy();
    await scratch?.drop();
  });

  it("is found by the outcome's update through conversation_messages_notification_idx, not a scan", async () => {
    const plan = await db.transaction(async (trx) => {
      // The table is empty here; with sequential scans priced out, the plan shows what can find the row.
      await trx.raw("set local enable_seqscan = off");
      const explained = await trx.raw<{ rows: { "QUERY PLAN": string }[] }>(
        "explain update conversation_messages set state = 'sent', updated_at = now() where notification_id = 'ntf_x'",
      );
      return explained.rows.map((row) => row["QUERY PLAN"]).join("\n");
    });
    expect(plan).toMatch(/Index (Only )?Scan using conversation_messages_notification_idx/);
  });
});

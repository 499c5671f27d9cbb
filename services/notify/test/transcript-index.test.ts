/**
 * A send's outcome finds its transcript entry by notification id through an index, not by reading
 * the whole transcript (migration 20261127190000; bench:growth found the scan: a send's p50 went
 * from 16.6 to 516 ms at 3 million notifications).
 */
import { createScratchDatabase, type ScratchDatabase } from "@platform/local-stack/postgres-databases";
import { createDatabase, migrateToLatest, type Knex } from "@platform/service-kit/postgres";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { migrations } from "../migrations/index.js";
import pg from "pg";
import { NOTIFY_SCHEMA } from "../src/config.js";
import { createNotificationStore } from "../src/db/notification-store.js";

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

  it("a transcript page reads the page's rows of each side in seq order, not the recipient's whole history", async () => {
    // One recipient with 3 000 notifications (bench:growth at 10 million: 415 ms at p99 when the
    // page merged both sides whole and sorted them).
    await db.raw(
      `insert into tenants (id, name, status, activated, channel_ready, plan, activation_state, activated_at, created_at, updated_at)
       values ('ten_page', 'Page', 'active', true, true, 'commercial', 'live', now(), now(), now())`,
    );
    await db.raw(
      `insert into notification_commands (id, tenant_id, idempotency_key, type, recipient, state, counted, month, request_id,
                                          created_at, updated_at)
       select 'ntf_' || n, 'ten_page', 'key-' || n, 'reminder', '+15550000001', 'sent', false, '2026-11', 'req_' || n, now(), now()
         from generate_series(1, 3000) n`,
    );
    await db.raw(
      `insert into conversation_messages (id, tenant_id, recipient, notification_id, type, text, state, actor_reference)
       select 'msg_' || n, 'ten_page', '+15550000001', 'ntf_' || n, 'reminder', 'Hi', 'sent', 'clinic'
         from generate_series(1, 3000) n`,
    );
    await db.raw("analyze");
    const statements: { sql: string; bindings: unknown[] }[] = [];
    const listen = (query: { sql: string; bindings: unknown[] }) => statements.push(query);
    db.on("query", listen);
    const pool = new pg.Pool({ connectionString: scratch.url, max: 1 });
    try {
      const page = await createNotificationStore(db, pool).listTranscript("ten_page", "+15550000001", 20, undefined);
      expect(page.map((entry) => entry.notificationId)).toEqual(
        Array.from({ length: 20 }, (_, i) => `ntf_${3000 - i}`),
      );
    } finally {
      db.off("query", listen);
      await pool.end();
    }
    const statement = statements.find((s) => /conversation_messages/.test(s.sql))!;
    const explained = await db.raw<{ rows: { "QUERY PLAN": { Plan: PlanNode }[] }[] }>(
      `explain (analyze, format json) ${statement.sql.replace(/\$(\d+)/g, "?")}`,
      statement.bindings as readonly Knex.Value[],
    );
    const read = nodes(explained.rows[0]!["QUERY PLAN"][0]!.Plan)
      .filter((n) => n["Relation Name"] === "conversation_messages")
      .reduce((sum, n) => sum + n["Actual Rows"] * n["Actual Loops"], 0);
    // The page (20), not the 3 000.
    expect(read).toBeLessThanOrEqual(21);
  });
});

interface PlanNode {
  "Relation Name"?: string;
  "Actual Rows": number;
  "Actual Loops": number;
  Plans?: PlanNode[];
}

const nodes = (node: PlanNode): PlanNode[] => [node, ...(node.Plans ?? []).flatMap(nodes)];

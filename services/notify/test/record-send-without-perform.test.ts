/**
 * record_send's calls that touch no table run as PL/pgSQL simple expressions, not `perform`
 * statements, and a paced send finds its number's sequence in place (migration 20261128180000,
 * issue 33: bench:notify's BENCH_PG_PERF found PL/pgSQL's own work the largest item of Postgres's
 * CPU per send that floor (c) does not have). The send's answers and the pace are unchanged: the
 * whole suite runs on this record_send; here, what the change itself does, against a real scratch
 * database, before (its `down`) and after.
 */
import { randomUUID } from "node:crypto";
import { createScratchDatabase, type ScratchDatabase } from "@platform/local-stack/postgres-databases";
import { createDatabase, migrateToLatest, type Knex } from "@platform/service-kit/postgres";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { migrations } from "../migrations/index.js";
import { down, up } from "../migrations/20261128180000_record_send_without_perform.js";
import { NOTIFY_SCHEMA } from "../src/config.js";
import { createNotificationStore } from "../src/db/notification-store.js";
import { createTenantRepository } from "../src/db/tenant-repository.js";
import { activate } from "../src/domain/tenant.js";

const INTERVAL_US = 10_000_000; // 0.1 sends a second: one slot every 10 s
const PACE = { key: "whatsapp:perform-test", perSecond: 0.1, burst: 100 };

describe("record_send without perform statements (real Postgres)", () => {
  let scratch: ScratchDatabase;
  let db: Knex;
  let client: pg.Client;
  let serial = 0;

  beforeAll(async () => {
    scratch = await createScratchDatabase("record_send_perform");
    db = createDatabase({ url: scratch.url, schema: NOTIFY_SCHEMA, poolMax: 2 });
    await migrateToLatest(db, NOTIFY_SCHEMA, migrations);
    const tenants = createTenantRepository(db);
    await db.transaction(async (trx) => {
      await tenants.create(trx, { id: "payer", name: "payer", plan: "commercial" });
      await tenants.update(trx, "payer", activate);
    });
    // One connection: its own transaction's function statistics (track_functions = pl).
    client = new pg.Client({
      connectionString: scratch.url,
      options: `-c search_path=${NOTIFY_SCHEMA} -c track_functions=pl`,
    });
    await client.connect();
  }, 60_000);

  afterAll(async () => {
    await client?.end();
    await db?.destroy();
    await scratch?.drop();
  });

  /** PL/pgSQL calls this connection made and has not yet reported (the server's pending counts). */
  const pending = async () => {
    const { rows } = await client.query<{ funcname: string; calls: string }>(
      "select funcname, calls from pg_stat_xact_user_functions where funcname in ('record_send', 'pace_sequence')",
    );
    return new Map(rows.map((r) => [r.funcname, Number(r.calls)]));
  };

  /**
   * `sends` paced sends in one transaction (rolled back unless `keep`): the PL/pgSQL functions
   * they called, and the number's arrival time after each.
   */
  async function paced(sends: number, keep = false) {
    const store = createNotificationStore(db, {
      connect: () => Promise.resolve(Object.assign(client, { release: () => undefined })),
    } as unknown as pg.Pool);
    await client.query("begin");
    const before = await pending();
    try {
      const slots: bigint[] = [];
      for (let i = 0; i < sends; i++) {
        const n = serial++;
        const recorded = await store.record({
          tenantId: "payer",
          idempotencyKey: `key-${n}`,
          fingerprint: "fp",
          owner: randomUUID(),
          notificationId: `ntf_perform_${n}`,
          transcriptEntryId: `msg_perform_${n}`,
          recipient: "+447700900123",
          type: "reminder",
          text: "Hi Ana",
          actorReference: "crm-user-7",
          delegationReference: null,
          requestId: `req_${n}`,
          leaseMs: 30_000,
          ttlMs: 86_400_000,
          testingAllowance: 10,
          pace: PACE,
        });
        expect(recorded).toMatchObject({ recorded: true, monthSends: null });
        const { rows } = await client.query<{ tat: string }>(
          "select pg_sequence_last_value(to_regclass('pace_' || md5($1))) as tat",
          [PACE.key],
        );
        slots.push(BigInt(rows[0]!.tat));
      }
      const calls: Record<string, number> = {};
      for (const [name, n] of await pending())
        if (n > (before.get(name) ?? 0)) calls[name] = n - (before.get(name) ?? 0);
      return { calls, slots };
    } finally {
      await client.query(keep ? "commit" : "rollback");
    }
  }

  it("calls no nested function once the number's sequence exists, and still takes one slot per send", async () => {
    const first = await paced(1, true); // the number's first send makes its sequence (committed)
    expect(first.calls).toEqual({ record_send: 1, pace_sequence: 1 });
    const { calls, slots } = await paced(5);
    expect(calls).toEqual({ record_send: 5 });
    // Each send advanced the number's arrival time by exactly one interval (setval as an expression).
    expect(slots.slice(1).map((tat, i) => tat - slots[i]!)).toEqual(Array(4).fill(BigInt(INTERVAL_US)));
  });

  it("has no perform left but the two that read a table (the key's probe, the opt-out)", async () => {
    const source = async () =>
      (
        await client.query<{ src: string }>(
          "select prosrc as src from pg_proc where proname = 'record_send' and pronamespace = $1::regnamespace and pronargs = 26",
          [NOTIFY_SCHEMA],
        )
      ).rows[0]!.src;
    const performs = (src: string) => [...src.matchAll(/perform\s+([^;]+);/g)].map((m) => m[1]!.split(/\s+/)[0]);
    expect(performs(await source())).toEqual(["1", "1"]);
    // The release before: five performs of function calls, and pace_sequence on every paced send.
    await down(db);
    try {
      expect(performs(await source())).toEqual([
        "1",
        "pg_advisory_xact_lock_shared(hashtextextended('notify.tenant_plan|'",
        "1",
        "pg_advisory_lock(v_pace_lock)",
        "setval(v_pace,",
        "pg_advisory_unlock(v_pace_lock)",
        "pg_advisory_unlock(v_pace_lock)",
      ]);
      expect((await paced(3)).calls).toEqual({ record_send: 3, pace_sequence: 3 });
    } finally {
      await up(db);
    }
    expect((await paced(3)).calls).toEqual({ record_send: 3 });
  });
});

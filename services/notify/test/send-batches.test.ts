/**
 * Sends that arrive together share the send path's statements and commits (issue 33, migration
 * 20261129000000_send_batches, db/notification-store.ts): notify's send store with batching on,
 * against a real scratch database. Sends made in one turn of the event loop go out in one
 * record_sends and one complete_sends statement (one transaction each: the rows they write carry
 * one transaction timestamp), and each send is answered as it would be alone: refusals, a repeated
 * key, a send over its number's pace and one that reaches an allowance threshold are each its own,
 * and a batch that fails as a whole is answered send by send.
 */
import { randomUUID } from "node:crypto";
import type { Knex } from "@platform/service-kit/postgres";
import pg from "pg";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import type { ChannelOutcome } from "../src/domain/channel-provider.js";
import { createEventOutbox } from "../src/db/event-outbox.js";
import { createNotificationStore, type NewSend, type NotificationStore } from "../src/db/notification-store.js";
import { ChannelPacedError } from "../src/domain/pacing.js";
import { allowanceThresholdEventId } from "../src/domain/testing-allowance.js";
import { openSendDatabase, sendsOf, type SendDatabase } from "./send-store-database.js";

/** Warned at 4 sends (80%), full at 5. */
const ALLOWANCE = 5;

describe("sends that arrive together share one statement and one commit (real Postgres)", () => {
  let database: SendDatabase;
  let db: Knex;
  let store: NotificationStore;
  /** Each batch that went out: its statement and its size. */
  const batches: string[] = [];
  const newSend = sendsOf(ALLOWANCE);

  beforeAll(async () => {
    database = await openSendDatabase(
      "send_batches",
      [
        { id: "payer", plan: "commercial" },
        { id: "tester", plan: "testing" },
        { id: "paced", plan: "commercial" },
        { id: "dormant", plan: "commercial", activated: false },
      ],
      (trx, tenants) => tenants.setOptOut(trx, "payer", "+447700900999", true),
    );
    db = database.db;
    store = createNotificationStore(db, database.pool, createEventOutbox({ namespace: "test." }), {
      maxBatch: 32,
      maxInFlight: 1,
      onBatch: (statement, size) => batches.push(`${statement} ${size}`),
    });
  }, 60_000);

  afterAll(async () => {
    await database?.close();
  });

  beforeEach(() => {
    batches.length = 0;
  });

  /** Each answer, or the refusal's code (or the pg error's SQLSTATE). */
  const settle = (sends: NewSend[]) =>
    Promise.all(
      sends.map((send) =>
        store.record(send).then(
          (recorded) => (recorded.recorded ? "recorded" : "claimed"),
          (error: { code?: string }) => error.code,
        ),
      ),
    );
  const commandsOf = async (ids: string[]) =>
    db("notification_commands")
      .select<{ id: string; state: string; created_at: Date; updated_at: Date }[]>(
        "id",
        "state",
        "created_at",
        "updated_at",
      )
      .whereIn("id", ids);

  it("records the sends of one turn in one statement and one transaction, each answered as alone", async () => {
    const first = newSend("payer");
    const sends = [
      newSend("payer"),
      first,
      newSend("payer", { idempotencyKey: first.idempotencyKey }),
      newSend("dormant"),
      newSend("payer", { recipient: "+447700900999" }),
      newSend("nobody"),
      newSend("payer"),
    ];
    const answers = await settle(sends);
    expect(answers).toEqual([
      "recorded",
      "recorded",
      // The same key again in the same statement: claimed, as a concurrent repeat is.
      "claimed",
      "account.tenant_not_activated",
      "partner.recipient_opted_out",
      "tenant.not_found",
      "recorded",
    ]);
    expect(batches).toEqual(["record 7"]);
    // One transaction: every row it wrote has its transaction's timestamp.
    const recorded = [sends[0]!, sends[1]!, sends[6]!];
    const commands = await commandsOf(recorded.map((send) => send.notificationId));
    expect(commands).toHaveLength(3);
    expect(new Set(commands.map((command) => command.created_at.getTime())).size).toBe(1);
    expect(commands.every((command) => command.state === "dispatching")).toBe(true);
    const keys = await db("idempotency_keys").select("key").where({ scope: "payer", state: "in_progress" });
    expect(keys.map((row: { key: string }) => row.key).sort()).toEqual(
      recorded.map((send) => send.idempotencyKey).sort(),
    );

    // Their outcomes, given together: one statement, one transaction; a failure releases its key.
    const outcomes: ChannelOutcome[] = [
      { kind: "sent", providerMessageId: "wamid.1" },
      { kind: "failed", code: "partner.recipient_undeliverable", providerCode: "131026" },
      { kind: "unknown", reason: "timeout" },
    ];
    await Promise.all(
      recorded.map((send, i) =>
        store.complete(send, outcomes[i]!, "whatsapp", {
          notificationId: send.notificationId,
          state: outcomes[i]!.kind === "sent" ? "sent" : "unknown",
          type: "reminder",
          createdAt: new Date().toISOString(),
        }),
      ),
    );
    expect(batches).toEqual(["record 7", "outcome 3"]);
    const completed = await commandsOf(recorded.map((send) => send.notificationId));
    const stateOf = Object.fromEntries(completed.map((command) => [command.id, command.state]));
    expect(recorded.map((send) => stateOf[send.notificationId])).toEqual(["sent", "failed", "unknown"]);
    expect(new Set(completed.map((command) => command.updated_at.getTime())).size).toBe(1);
    const keysAfter = await db("idempotency_keys")
      .select<{ key: string; state: string }[]>("key", "state")
      .whereIn(
        "key",
        recorded.map((send) => send.idempotencyKey),
      );
    const keyState = Object.fromEntries(keysAfter.map((row) => [row.key, row.state]));
    expect(recorded.map((send) => keyState[send.idempotencyKey])).toEqual(["completed", undefined, "completed"]);
    const events = await db("outbox")
      .select<{ subject: string }[]>("subject")
      .where("subject", "like", "test.events.payer.notification.%")
      .orderBy("subject");
    expect(events.map((row) => row.subject)).toEqual([
      "test.events.payer.notification.failed",
      "test.events.payer.notification.sent",
      "test.events.payer.notification.unknown",
    ]);
  });

  it("refuses alone a send over its number's pace: the others of its statement are kept", async () => {
    // A burst of 2, one send per 100 s: two of the four take a slot, the other two are paced.
    const pace = { key: `whatsapp:${randomUUID()}`, perSecond: 0.01, burst: 2 };
    const sends = Array.from({ length: 4 }, () => newSend("paced", { pace }));
    const answers = await settle(sends);
    expect(batches).toEqual(["record 4"]);
    expect(answers).toEqual(["recorded", "recorded", "partner.channel_rate_limited", "partner.channel_rate_limited"]);
    const paced = await Promise.all(sends.slice(2).map((send) => store.record(send).catch((error: unknown) => error)));
    expect(paced.every((error) => error instanceof ChannelPacedError && error.waitSeconds > 0)).toBe(true);
    const kept = await db("idempotency_keys").count<{ n: string }[]>({ n: "*" }).where({ scope: "paced" });
    expect(Number(kept[0]!.n)).toBe(2);
    const commands = await commandsOf(sends.map((send) => send.notificationId));
    expect(commands.map((command) => command.id).sort()).toEqual(
      sends
        .slice(0, 2)
        .map((s) => s.notificationId)
        .sort(),
    );
  });

  it("sends again alone, with its event, a send of the statement that reaches an allowance threshold", async () => {
    const answers = await settle(Array.from({ length: ALLOWANCE + 1 }, () => newSend("tester")));
    // Sends 4 and 5 reach 80% and 100%: each asked for its event inside the batch, then went alone.
    expect(batches).toEqual([`record ${ALLOWANCE + 1}`]);
    expect(answers.filter((answer) => answer === "recorded")).toHaveLength(ALLOWANCE);
    expect(answers.filter((answer) => answer === "account.testing_allowance_exhausted")).toHaveLength(1);
    const month = new Date().toISOString().slice(0, 7);
    const events = await db("outbox")
      .select<{ event_id: string; bytes: number }[]>("event_id", db.raw("length(payload) as bytes"))
      .where("subject", "like", "test.events.tester.usage.%")
      .orderBy("seq");
    expect(events.map((row) => row.event_id).sort()).toEqual(
      [
        allowanceThresholdEventId("tester", month, "80_percent"),
        allowanceThresholdEventId("tester", month, "100_percent"),
      ].sort(),
    );
    expect(events.every((row) => row.bytes > 100)).toBe(true);
    const [row] = await db("monthly_sends").select<{ sends: number }[]>("sends").where({ tenant_id: "tester" });
    expect(row!.sends).toBe(ALLOWANCE);
  });

  it("fails every send of the statement at once, with its error, when the database cannot be reached", async () => {
    // Nothing listens on port 1: the connection is refused.
    const unreachable = new pg.Pool({ connectionString: "postgres://postgres@127.0.0.1:1/none", max: 2 });
    const sizes: number[] = [];
    const cut = createNotificationStore(db, unreachable, undefined, {
      maxBatch: 32,
      maxInFlight: 1,
      onBatch: (_, size) => sizes.push(size),
    });
    const failures = await Promise.all(
      [newSend("payer"), newSend("payer"), newSend("payer")].map((send) =>
        cut.record(send).then(
          () => undefined,
          (error: unknown) => error,
        ),
      ),
    );
    await unreachable.end();
    expect(sizes).toEqual([3]);
    // One error for the three (the statement's), not three attempts one after the other.
    expect(new Set(failures).size).toBe(1);
    expect(failures[0]).toMatchObject({ code: "service.unavailable" });
  });

  it("answers send by send when the statement fails as a whole, keeping every send that can be kept", async () => {
    // Two sends with one notification id: record_sends fails on the second (unique violation) and
    // rolls back all three; each then goes alone, and only the second fails.
    const first = newSend("payer");
    const sends = [first, newSend("payer", { notificationId: first.notificationId }), newSend("payer")];
    const answers = await settle(sends);
    expect(batches).toEqual(["record 3"]);
    expect(answers).toEqual(["recorded", "23505", "recorded"]);
    const keys = await db("idempotency_keys")
      .select<{ key: string }[]>("key")
      .whereIn(
        "key",
        sends.map((send) => send.idempotencyKey),
      );
    expect(keys.map((row) => row.key).sort()).toEqual([sends[0]!.idempotencyKey, sends[2]!.idempotencyKey].sort());
  });
});

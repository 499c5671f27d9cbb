/**
 * The testing allowance's 80% and 100% events are built only by the send that reaches each
 * threshold (migration 20261128140000, issue 33: work a send does not need is not done per send).
 * notify's send store against a real scratch database: every other send passes each event's id
 * without its payload, and record_send asks for the payload (PN428, nothing kept) only from the
 * send that reaches the threshold. Each event is written exactly once with its payload, and a
 * commercial tenant's sends build none.
 */
import type { Knex } from "@platform/service-kit/postgres";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createEventOutbox, type EventOutbox } from "../src/db/event-outbox.js";
import { createNotificationStore, type NotificationStore } from "../src/db/notification-store.js";
import { allowanceThresholdEventId, thresholdSends } from "../src/domain/testing-allowance.js";
import { TestingAllowanceExhaustedError } from "../src/domain/send-preconditions.js";
import { openSendDatabase, sendsOf, type SendDatabase } from "./send-store-database.js";

/** Warned at 8 sends (80%), full at 10. */
const ALLOWANCE = 10;

describe("the testing allowance's events, built on demand (real Postgres)", () => {
  let database: SendDatabase;
  let db: Knex;
  let store: NotificationStore;
  /** The events the store built, by type, in order. */
  const built: string[] = [];
  const newSend = sendsOf(ALLOWANCE);

  beforeAll(async () => {
    database = await openSendDatabase("allowance_events", [
      { id: "tester", plan: "testing" },
      { id: "payer", plan: "commercial" },
    ]);
    db = database.db;
    const outbox = createEventOutbox({ namespace: "test." });
    const counting: EventOutbox = {
      ...outbox,
      entryOf(event) {
        built.push(event.type);
        return outbox.entryOf(event);
      },
    };
    store = createNotificationStore(db, database.pool, counting);
  }, 60_000);

  afterAll(async () => {
    await database?.close();
  });

  const send = (tenantId: string) => store.record(newSend(tenantId));
  const outboxRows = async () =>
    (
      await db.raw<{ rows: { event_id: string; subject: string; bytes: number }[] }>(
        "select event_id, subject, length(payload) as bytes from outbox order by seq",
      )
    ).rows;

  it("builds no event for a send that reaches no threshold, and each event once, by the send that reaches it", async () => {
    expect(thresholdSends(ALLOWANCE, "80_percent")).toBe(8);
    const builtAfter: number[] = [];
    for (let i = 1; i <= ALLOWANCE; i++) {
      const recorded = await send("tester");
      expect(recorded).toMatchObject({ recorded: true, monthSends: i });
      builtAfter.push(built.length);
    }
    // Sends 1-7 build nothing (before: two events each, 14 in all); the 8th builds both (asked
    // for them once) and writes the 80% one; the 10th the same, writing the 100% one.
    expect(builtAfter).toEqual([0, 0, 0, 0, 0, 0, 0, 2, 2, 4]);
    const month = new Date().toISOString().slice(0, 7);
    const rows = await outboxRows();
    expect(rows.map((row) => row.event_id)).toEqual([
      allowanceThresholdEventId("tester", month, "80_percent"),
      allowanceThresholdEventId("tester", month, "100_percent"),
    ]);
    for (const row of rows) {
      expect(row.subject).toBe("test.events.tester.usage.testing_allowance_threshold_crossed");
      expect(row.bytes).toBeGreaterThan(100);
    }
    // The next send is refused, builds nothing and writes nothing.
    await expect(send("tester")).rejects.toBeInstanceOf(TestingAllowanceExhaustedError);
    expect(built.length).toBe(4);
    expect(await outboxRows()).toHaveLength(2);
  });

  it("builds none for a commercial tenant's sends", async () => {
    const before = built.length;
    for (let i = 0; i < 12; i++) expect(await send("payer")).toMatchObject({ recorded: true, monthSends: null });
    expect(built.length).toBe(before);
    expect(await outboxRows()).toHaveLength(2);
  });
});

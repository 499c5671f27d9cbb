/**
 * The send preconditions' table (src/domain/send-preconditions.cases.ts) run against their atomic
 * enforcement: for each case the facts are written as rows (tenant, opt-out, this month's count,
 * a held key) and the send is recorded through the store's send path (record_send), whose answer
 * must be the case's outcome. src/domain/send-preconditions.test.ts runs the same table against
 * decideSend, so the plpgsql function and the domain rule cannot drift apart.
 */
import { randomUUID } from "node:crypto";
import { DomainError } from "@platform/service-kit/errors";
import { IDEMPOTENCY_TABLE } from "@platform/service-kit/idempotency";
import { createScratchDatabase, type ScratchDatabase } from "@platform/local-stack/postgres-databases";
import { createDatabase, migrateToLatest, type Knex } from "@platform/service-kit/postgres";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { migrations } from "../migrations/index.js";
import { NOTIFY_SCHEMA } from "../src/config.js";
import { createNotificationStore, type NotificationStore } from "../src/db/notification-store.js";
import { newNotificationId, newTranscriptEntryId } from "../src/domain/notification.js";
import { sendPreconditionCases, type SendOutcome } from "../src/domain/send-preconditions.cases.js";
import { allowanceMonth, type SendFacts } from "../src/domain/send-preconditions.js";

const recipient = "447700900123";

describe("record_send answers the send preconditions' table (real Postgres)", () => {
  let scratch: ScratchDatabase;
  let db: Knex;
  let pool: pg.Pool;
  let store: NotificationStore;

  beforeAll(async () => {
    scratch = await createScratchDatabase("sendpre");
    db = createDatabase({ url: scratch.url, schema: NOTIFY_SCHEMA, poolMax: 2 });
    await migrateToLatest(db, NOTIFY_SCHEMA, migrations);
    pool = new pg.Pool({ connectionString: scratch.url, max: 2, options: `-c search_path=${NOTIFY_SCHEMA}` });
    store = createNotificationStore(db, pool);
  });
  afterAll(async () => {
    await pool?.end();
    await db?.destroy();
    await scratch?.drop();
  });

  /** The facts as rows, for a tenant of the case's own. */
  async function writeFacts(tenantId: string, key: string, facts: SendFacts, month: string): Promise<void> {
    if (facts.tenant) {
      await db("tenants").insert({
        id: tenantId,
        name: tenantId,
        status: facts.tenant.activated ? "active" : "pending_activation",
        activated: facts.tenant.activated,
        channel_ready: facts.tenant.channelReady,
        plan: facts.tenant.plan,
      });
      if (facts.recipientOptedOut) await db("recipient_opt_outs").insert({ tenant_id: tenantId, recipient });
      if (facts.sendsThisMonth > 0) {
        await db("monthly_sends").insert({ tenant_id: tenantId, month, sends: facts.sendsThisMonth });
      }
    } else if (facts.recipientOptedOut || facts.sendsThisMonth > 0) {
      throw new Error("an opt-out or a count needs a tenant (foreign keys)");
    }
    if (facts.keyHeld) {
      await db(IDEMPOTENCY_TABLE).insert({
        scope: tenantId,
        key,
        fingerprint: "an earlier attempt",
        state: "in_progress",
        owner: randomUUID(),
        locked_until: db.raw("now() + interval '1 minute'"),
        expires_at: db.raw("now() + interval '1 hour'"),
      });
    }
  }

  const countThisMonth = async (tenantId: string, month: string) =>
    (await db("monthly_sends").first<{ sends: number } | undefined>("sends").where({ tenant_id: tenantId, month }))
      ?.sends ?? 0;

  it.each(sendPreconditionCases.map((c, i) => [c.name, c, i] as const))("%s", async (_name, { facts, expected }, i) => {
    const tenantId = `case-${i}`;
    const key = `key-${i}`;
    const owner = randomUUID();
    const month = allowanceMonth(new Date());
    await writeFacts(tenantId, key, facts, month);

    let outcome: SendOutcome;
    try {
      const recorded = await store.record({
        tenantId,
        idempotencyKey: key,
        fingerprint: "this attempt",
        owner,
        notificationId: newNotificationId(),
        transcriptEntryId: newTranscriptEntryId(),
        recipient,
        type: "no_show",
        text: "Hi Ana, we missed you at your grooming appointment.",
        actorReference: "crm",
        delegationReference: null,
        requestId: `req-${i}`,
        leaseMs: 30_000,
        ttlMs: 60_000,
        testingAllowance: facts.allowance,
      });
      if (recorded.recorded) {
        const command = await db("notification_commands")
          .first<{ counted: boolean }>("counted")
          .where({ tenant_id: tenantId, idempotency_key: key });
        outcome = command?.counted ? "allowed, counted" : "allowed, not counted";
      } else outcome = "repeat";
    } catch (error) {
      if (!(error instanceof DomainError)) throw error;
      outcome = error.code as SendOutcome;
    }
    expect(outcome).toBe(expected);

    // What the outcome left behind: a counted send took one from the allowance; anything else
    // (a refusal, a repeat, an uncounted send) left the month's count alone, and only a send
    // that went through wrote a command and holds the key as its own.
    const allowed = outcome === "allowed, counted" || outcome === "allowed, not counted";
    expect(await countThisMonth(tenantId, month)).toBe(facts.sendsThisMonth + (outcome === "allowed, counted" ? 1 : 0));
    expect(await db("notification_commands").where({ tenant_id: tenantId }).count<{ n: string }[]>("* as n")).toEqual([
      { n: allowed ? "1" : "0" },
    ]);
    const claim = await db(IDEMPOTENCY_TABLE).first<{ owner: string } | undefined>("owner").where({
      scope: tenantId,
      key,
    });
    if (allowed) expect(claim?.owner).toBe(owner);
    else if (facts.keyHeld) expect(claim?.owner).not.toBe(owner);
    else expect(claim).toBeUndefined();
  });
});

import { Metadata } from "@grpc/grpc-js";
import { statusNotification, type StatusCallback } from "@platform/local-stack/cloud-api-stub";
import { createScratchDatabase, type ScratchDatabase } from "@platform/local-stack/postgres-databases";
import { createLogger } from "@platform/service-kit/logger";
import { createDatabase, migrateToLatest, type Knex } from "@platform/service-kit/postgres";
import pg from "pg";
import { Registry } from "prom-client";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { migrations } from "../migrations/index.js";
import {
  createProviderCallbackApplier,
  type ProviderCallbackHandlers,
} from "../src/callbacks/provider-callback-applier.js";
import { deliveryFailureFor } from "../src/channel/whatsapp-errors.js";
import { NOTIFY_SCHEMA } from "../src/config.js";
import { createEventOutbox } from "../src/db/event-outbox.js";
import { createNotificationStore } from "../src/db/notification-store.js";
import { createProviderCallbackStore } from "../src/db/provider-callback-store.js";
import { createTenantRepository } from "../src/db/tenant-repository.js";
import type { ChannelOutcome, ChannelProvider } from "../src/domain/channel-provider.js";
import { activate } from "../src/domain/tenant.js";
import { createNotificationMetrics } from "../src/grpc/notification-metrics.js";
import { createNotificationService } from "../src/grpc/notification-service.js";
import {
  createNotificationStatusService,
  createProviderCallbackService,
} from "../src/grpc/provider-callback-service.js";

/**
 * Provider callbacks in notify against real Postgres: recording (once per body), applying
 * (statuses never backwards, events once per step, pending statuses, handlers), and the pass that
 * applies what a failure or a crash left behind.
 */
describe("provider callbacks (real Postgres)", () => {
  let scratch: ScratchDatabase;
  let db: Knex;
  let pool: pg.Pool;
  const logger = createLogger("notify", "silent");
  const context = () => ({ requestId: "req-callbacks", logger, metadata: new Metadata() });
  const events = createEventOutbox({ namespace: "cbtest." });
  const PHONE_NUMBER_ID = "106540352242922";
  let nextOutcome: ChannelOutcome = { kind: "sent", providerMessageId: "wamid.first" };
  const provider: ChannelProvider = { name: "whatsapp", send: () => Promise.resolve(nextOutcome) };
  let calls: { inbound: [string, unknown[]][]; updates: { field: string; value: unknown }[] };
  let failHandlers = 0;
  const handlers: ProviderCallbackHandlers = {
    inboundMessages(phoneNumberId, messages) {
      if (failHandlers > 0) {
        failHandlers--;
        return Promise.reject(new Error("the channel is away"));
      }
      calls.inbound.push([phoneNumberId, messages]);
      return Promise.resolve();
    },
    numberUpdate(change) {
      calls.updates.push(change);
      return Promise.resolve();
    },
  };
  let store: ReturnType<typeof createProviderCallbackStore>;
  let applier: ReturnType<typeof createProviderCallbackApplier>;
  let callbacks: ReturnType<typeof createProviderCallbackService>;
  let statuses: ReturnType<typeof createNotificationStatusService>;
  let sends: ReturnType<typeof createNotificationService>;
  let n = 0;

  beforeAll(async () => {
    scratch = await createScratchDatabase("callbacks");
    db = createDatabase({ url: scratch.url, schema: NOTIFY_SCHEMA, poolMax: 4 });
    await migrateToLatest(db, NOTIFY_SCHEMA, migrations);
    pool = new pg.Pool({ connectionString: scratch.url, max: 4, options: `-c search_path=${NOTIFY_SCHEMA}` });
    // Dropping the scratch database at the end terminates connections the pool is still closing.
    pool.on("error", () => undefined);
    const tenants = createTenantRepository(db);
    await db.transaction(async (trx) => {
      for (const id of ["acme", "other"]) {
        await tenants.create(trx, { id, name: id, plan: "commercial" });
        await tenants.update(trx, id, activate);
      }
    });
    store = createProviderCallbackStore(db, events, { failureCodeFor: deliveryFailureFor });
    applier = createProviderCallbackApplier({ store, handlers, logger, retryDelayMs: 0 });
    callbacks = createProviderCallbackService({ store, applier });
    statuses = createNotificationStatusService({ store });
    sends = createNotificationService({
      store: createNotificationStore(db, pool, events),
      provider,
      metrics: createNotificationMetrics(new Registry()),
      leaseMs: 30_000,
      ttlMs: 60_000,
      testingAllowance: 1000,
    });
  });
  afterAll(async () => {
    await pool?.end();
    await db?.destroy();
    await scratch?.drop();
  });
  beforeEach(() => {
    calls = { inbound: [], updates: [] };
    failHandlers = 0;
  });

  /** Sends one notification that the provider answers with `wamid`; returns its id. */
  async function send(wamid: string, tenantId = "acme"): Promise<string> {
    nextOutcome = { kind: "sent", providerMessageId: wamid };
    const answer = await sends.sendNotification(
      {
        tenantId,
        idempotencyKey: `cb-key-${n++}-xxxx`,
        to: "+447700900123",
        type: "no_show",
        clientName: "Ana",
        serviceName: "grooming",
        actor: { actorReference: "crm", delegationReference: undefined },
        otherFields: [],
      },
      context(),
    );
    return answer.notificationId;
  }

  const post = (body: Record<string, unknown> | string) =>
    callbacks.recordProviderCallbacks(
      { provider: "whatsapp", body: Buffer.from(typeof body === "string" ? body : JSON.stringify(body)) },
      context(),
    );
  const postStatuses = (list: StatusCallback[]) => post(statusNotification(PHONE_NUMBER_ID, list));
  const read = async (notificationId: string, tenantId = "acme") =>
    (await statuses.getNotification({ tenantId, notificationId }, context())).notification!;
  /** Outbox rows of `type` about `notificationId` (the relay is not running: every row stays). */
  async function eventsOf(type: string, tenantId = "acme"): Promise<number> {
    const rows = await db("outbox")
      .where({ subject: `cbtest.events.${tenantId}.${type}` })
      .count<{ c: string }[]>("* as c");
    return Number(rows[0]!.c);
  }
  const at = (seconds: number) => new Date(seconds * 1000).toISOString();
  const wamid = () => `wamid.test${n++}`;

  it("starts a sent notification at accepted, with its time", async () => {
    const id = await send(wamid());
    const record = await read(id);
    expect(record).toMatchObject({ state: "sent", deliveryStatus: "accepted", reasonCode: "", sentAt: "", readAt: "" });
    expect(record.acceptedAt).not.toBe("");
  });

  it("applies statuses to the notification their message id names, each step once, never backwards", async () => {
    const message = wamid();
    const id = await send(message);
    const before = { delivered: await eventsOf("notification.delivered"), read: await eventsOf("notification.read") };
    await postStatuses([{ id: message, status: "sent", timestamp: 1_800_000_000 }]);
    expect(await read(id)).toMatchObject({ deliveryStatus: "sent", sentAt: at(1_800_000_000), deliveredAt: "" });
    // read before delivered: read implies delivered (at the read's time).
    await postStatuses([{ id: message, status: "read", timestamp: 1_800_000_020 }]);
    expect(await read(id)).toMatchObject({
      deliveryStatus: "read",
      deliveredAt: at(1_800_000_020),
      readAt: at(1_800_000_020),
    });
    // a late delivered, a repeated read, a late sent: nothing changes.
    await postStatuses([
      { id: message, status: "delivered", timestamp: 1_800_000_010 },
      { id: message, status: "read", timestamp: 1_800_000_030 },
      { id: message, status: "sent", timestamp: 1_800_000_001 },
    ]);
    // a failure after delivery is too late to change anything.
    await postStatuses([{ id: message, status: "failed", timestamp: 1_800_000_040, errorCode: 131026 }]);
    expect(await read(id)).toMatchObject({
      deliveryStatus: "read",
      sentAt: at(1_800_000_000),
      deliveredAt: at(1_800_000_020),
      readAt: at(1_800_000_020),
      failedAt: "",
      reasonCode: "",
    });
    expect({
      delivered: (await eventsOf("notification.delivered")) - before.delivered,
      read: (await eventsOf("notification.read")) - before.read,
    }).toEqual({ delivered: 1, read: 1 });
  });

  it("records a body once: the provider's retry of the same batch is not applied twice", async () => {
    const message = wamid();
    const id = await send(message);
    const before = await eventsOf("notification.delivered");
    const body = statusNotification(PHONE_NUMBER_ID, [{ id: message, status: "delivered", timestamp: 1_800_000_100 }]);
    const first = await post(body);
    const again = await post(body);
    expect({ duplicate: first.duplicate, again: again.duplicate, same: again.batchId === first.batchId }).toEqual({
      duplicate: false,
      again: true,
      same: true,
    });
    expect(await db("provider_callback_batches").where({ id: first.batchId }).count<{ c: string }[]>("* as c")).toEqual(
      [{ c: "1" }],
    );
    expect(await read(id)).toMatchObject({ deliveryStatus: "delivered", deliveredAt: at(1_800_000_100) });
    expect((await eventsOf("notification.delivered")) - before).toBe(1);
  });

  it("keeps a status for a message no send has recorded yet, and applies it once the send records the id", async () => {
    const message = wamid();
    const before = { delivered: await eventsOf("notification.delivered"), read: await eventsOf("notification.read") };
    await postStatuses([
      { id: message, status: "read", timestamp: 1_800_000_300 },
      { id: message, status: "delivered", timestamp: 1_800_000_290 },
      { id: message, status: "sent", timestamp: 1_800_000_280 },
    ]);
    expect(
      await db("pending_provider_statuses").where({ provider_message_id: message }).count<{ c: string }[]>("* as c"),
    ).toEqual([{ c: "3" }]);
    const id = await send(message);
    await applier.pass();
    // Applied in time order: each step at its own time.
    expect(await read(id)).toMatchObject({
      deliveryStatus: "read",
      sentAt: at(1_800_000_280),
      deliveredAt: at(1_800_000_290),
      readAt: at(1_800_000_300),
    });
    expect(
      await db("pending_provider_statuses").where({ provider_message_id: message }).count<{ c: string }[]>("* as c"),
    ).toEqual([{ c: "0" }]);
    await applier.pass();
    expect({
      delivered: (await eventsOf("notification.delivered")) - before.delivered,
      read: (await eventsOf("notification.read")) - before.read,
    }).toEqual({ delivered: 1, read: 1 });
  });

  it("keeps a status for an unknown message id without failing the batch", async () => {
    const answer = await postStatuses([{ id: "wamid.nobody-sent-this", status: "delivered" }]);
    const batch = await db("provider_callback_batches")
      .first<{ applied_at: Date | null }>("applied_at")
      .where({ id: answer.batchId });
    expect(batch?.applied_at).not.toBeNull();
    expect(
      await db("pending_provider_statuses")
        .where({ provider_message_id: "wamid.nobody-sent-this" })
        .count<{ c: string }[]>("* as c"),
    ).toEqual([{ c: "1" }]);
  });

  it.each([
    [131026, "partner.recipient_undeliverable"],
    [131047, "notification.delivery_failed"],
    [131000, "notification.delivery_failed"],
  ])("maps a failed status with provider code %i to the catalogue code %s, announced once", async (code, expected) => {
    const message = wamid();
    const id = await send(message);
    const before = await eventsOf("notification.failed");
    await postStatuses([{ id: message, status: "failed", timestamp: 1_800_000_500, errorCode: code }]);
    await postStatuses([{ id: message, status: "failed", timestamp: 1_800_000_501, errorCode: code }]);
    // delivered after failed: failed is final.
    await postStatuses([{ id: message, status: "delivered", timestamp: 1_800_000_502 }]);
    expect(await read(id)).toMatchObject({
      state: "sent",
      deliveryStatus: "failed",
      reasonCode: expected,
      failedAt: at(1_800_000_500),
      deliveredAt: "",
    });
    expect((await eventsOf("notification.failed")) - before).toBe(1);
    const [row] = await db("notification_commands")
      .select<{ delivery_provider_code: string }[]>("delivery_provider_code")
      .where({ id });
    expect(row).toEqual({ delivery_provider_code: String(code) });
  });

  it("marks a send the channel refused as failed with the refusal's code, and says so in notification.failed", async () => {
    nextOutcome = { kind: "failed", code: "partner.template_unavailable", providerCode: "132001" };
    const before = await eventsOf("notification.failed");
    await expect(
      sends.sendNotification(
        {
          tenantId: "acme",
          idempotencyKey: `cb-refused-${n++}-xxxx`,
          to: "+447700900124",
          type: "no_show",
          clientName: "Ana",
          serviceName: "grooming",
          actor: { actorReference: "crm", delegationReference: undefined },
          otherFields: [],
        },
        context(),
      ),
    ).rejects.toMatchObject({ code: "partner.template_unavailable" });
    const [command] = await db("notification_commands")
      .select<{ id: string }[]>("id")
      .where({ recipient: "447700900124" })
      .orderBy("created_at", "desc")
      .limit(1);
    expect(await read(command!.id)).toMatchObject({
      state: "failed",
      deliveryStatus: "failed",
      reasonCode: "partner.template_unavailable",
    });
    expect((await eventsOf("notification.failed")) - before).toBe(1);
  });

  it("hands inbound messages and number updates to the handlers, once per entry, with their arguments", async () => {
    const inbound = [
      { from: "447700900123", id: "wamid.in1", timestamp: "1800000000", type: "text", text: { body: "STOP" } },
    ];
    const quality = { display_phone_number: "15550783881", event: "FLAGGED", current_limit: "TIER_1K" };
    const account = { phone_number: "15550783881", event: "VERIFIED_ACCOUNT" };
    await post({
      object: "whatsapp_business_account",
      entry: [
        {
          id: "102290129340398",
          changes: [
            {
              field: "messages",
              value: {
                messaging_product: "whatsapp",
                metadata: { phone_number_id: PHONE_NUMBER_ID },
                messages: inbound,
              },
            },
            { field: "phone_number_quality_update", value: quality },
          ],
        },
        {
          id: "102290129340398",
          changes: [
            { field: "account_update", value: account },
            { field: "message_template_status_update", value: {} },
          ],
        },
      ],
    });
    expect(calls).toEqual({
      inbound: [[PHONE_NUMBER_ID, inbound]],
      updates: [
        { field: "phone_number_quality_update", value: quality },
        { field: "account_update", value: account },
      ],
    });
  });

  it("leaves a batch whose handler failed to be applied again by the pass, statuses and all, without losing it", async () => {
    const message = wamid();
    const id = await send(message);
    failHandlers = 1;
    const inbound = [{ from: "447700900123", id: "wamid.in2", type: "text", text: { body: "hi" } }];
    const answer = await post({
      object: "whatsapp_business_account",
      entry: [
        {
          id: "102290129340398",
          changes: [
            {
              field: "messages",
              value: {
                metadata: { phone_number_id: PHONE_NUMBER_ID },
                statuses: [{ id: message, status: "delivered", timestamp: "1800000700" }],
                messages: inbound,
              },
            },
          ],
        },
      ],
    });
    const unapplied = await db("provider_callback_batches")
      .first<{ applied_at: Date | null; attempts: number; last_error: string }>("applied_at", "attempts", "last_error")
      .where({ id: answer.batchId });
    expect(unapplied).toEqual({ applied_at: null, attempts: 1, last_error: "the channel is away" });
    // rolled back with the batch: the status is applied when the batch is.
    expect(await read(id)).toMatchObject({ deliveryStatus: "accepted", deliveredAt: "" });
    expect(calls.inbound).toEqual([]);
    await applier.pass();
    expect(await read(id)).toMatchObject({ deliveryStatus: "delivered", deliveredAt: at(1_800_000_700) });
    expect(calls.inbound).toEqual([[PHONE_NUMBER_ID, inbound]]);
    const applied = await db("provider_callback_batches")
      .first<{ applied_at: Date | null }>("applied_at")
      .where({ id: answer.batchId });
    expect(applied?.applied_at).not.toBeNull();
  });

  it("loses nothing when notify dies between recording a batch and applying it: the next process's pass applies it", async () => {
    const message = wamid();
    const id = await send(message);
    // Recorded (the gateway's 200) but never applied: the process died right after the commit.
    const recorded = await store.record(
      "whatsapp",
      Buffer.from(
        JSON.stringify(
          statusNotification(PHONE_NUMBER_ID, [{ id: message, status: "read", timestamp: 1_800_000_800 }]),
        ),
      ),
    );
    expect(await read(id)).toMatchObject({ deliveryStatus: "accepted" });
    // A new process: its own store and applier over the same database.
    const next = createProviderCallbackApplier({
      store: createProviderCallbackStore(db, events, { failureCodeFor: deliveryFailureFor }),
      handlers,
      logger,
      retryDelayMs: 0,
    });
    await next.pass();
    expect(await read(id)).toMatchObject({ deliveryStatus: "read", readAt: at(1_800_000_800) });
    const batch = await db("provider_callback_batches")
      .first<{ applied_at: Date | null }>("applied_at")
      .where({ id: recorded.batchId });
    expect(batch?.applied_at).not.toBeNull();
  });

  it("refuses a body that is not a provider notification, recording nothing", async () => {
    const before = await db("provider_callback_batches").count<{ c: string }[]>("* as c");
    for (const body of ["not json", "[1,2]", JSON.stringify({ object: "page" })]) {
      await expect(post(body)).rejects.toMatchObject({ code: "provider.callback_invalid" });
    }
    expect(await db("provider_callback_batches").count<{ c: string }[]>("* as c")).toEqual(before);
  });

  it("answers another tenant's notification, an unknown id and a malformed id as notification.not_found", async () => {
    const id = await send(wamid(), "other");
    for (const notificationId of [id, "ntf_000000000000000000000000", "nope"]) {
      await expect(statuses.getNotification({ tenantId: "acme", notificationId }, context())).rejects.toMatchObject({
        code: "notification.not_found",
      });
    }
    await expect(statuses.getNotification({ tenantId: "ghost", notificationId: id }, context())).rejects.toMatchObject({
      code: "tenant.not_found",
    });
  });

  it("shows each transcript entry's delivery status", async () => {
    const message = wamid();
    await send(message);
    await postStatuses([{ id: message, status: "delivered" }]);
    const { messages } = await sends.listConversationMessages(
      { tenantId: "acme", to: "447700900123", limit: 1, cursor: "" },
      context(),
    );
    expect(messages.map((m) => [m.state, m.deliveryStatus])).toEqual([["sent", "delivered"]]);
  });
});

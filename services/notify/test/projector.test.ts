import { randomUUID } from "node:crypto";
import { Metadata } from "@grpc/grpc-js";
import { eventually } from "@platform/local-stack/https-receiver";
import { deleteNamespaceStreams, newNatsNamespace, testNatsUrl } from "@platform/local-stack/nats-namespace";
import { createScratchDatabase, type ScratchDatabase } from "@platform/local-stack/postgres-databases";
import { BusEvent } from "@platform/proto/webhooks/v1";
import { declareEventsStream, eventSubject } from "@platform/service-kit/event-bus";
import { createLogger } from "@platform/service-kit/logger";
import { startOutboxRelay, type OutboxRelay } from "@platform/service-kit/outbox";
import { createDatabase, migrateToLatest, type Knex } from "@platform/service-kit/postgres";
import { connect, type JetStreamClient, type JetStreamManager, type NatsConnection } from "nats";
import pg from "pg";
import { Registry } from "prom-client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { migrations } from "../migrations/index.js";
import { NOTIFY_SCHEMA } from "../src/config.js";
import { createNotificationStore } from "../src/db/notification-store.js";
import {
  applyEvents,
  createProjectionReader,
  PROJECTION_LOCK_KEY,
  projectionTables,
} from "../src/db/projection-store.js";
import { createTenantRepository } from "../src/db/tenant-repository.js";
import type { ChannelOutcome, ChannelProvider } from "../src/domain/channel-provider.js";
import { newNotificationId, newTranscriptEntryId } from "../src/domain/notification.js";
import { activate } from "../src/domain/tenant.js";
import { createEventOutbox, newEventId } from "../src/db/event-outbox.js";
import { declareProjectionsConsumer } from "../src/events/projections-consumer.js";
import { projectOne, rebuildProjections, startProjector, type Projector } from "../src/events/projector.js";
import { createProjectorMetrics } from "../src/events/projector-metrics.js";
import { createNotificationMetrics } from "../src/grpc/notification-metrics.js";
import { createNotificationService } from "../src/grpc/notification-service.js";
import { createProjectionService } from "../src/grpc/projection-service.js";

const logger = createLogger("notify", "silent");
const context = () => ({ requestId: "req-projector", logger, metadata: new Metadata() });

describe("the projector (real NATS and Postgres)", () => {
  const namespace = newNatsNamespace("proj");
  let scratch: ScratchDatabase;
  let db: Knex;
  let pool: pg.Pool;
  let nc: NatsConnection;
  let js: JetStreamClient;
  let jsm: JetStreamManager;
  let relay: OutboxRelay;
  let projector: Projector;
  let nextOutcome: ChannelOutcome = { kind: "sent", providerMessageId: "p-1" };
  const provider: ChannelProvider = { name: "scripted", send: () => Promise.resolve(nextOutcome) };
  let sends: ReturnType<typeof createNotificationService>;
  const rebuild = (trx: Knex.Transaction) => rebuildProjections(trx, { js, jsm, namespace, logger });
  let projections: ReturnType<typeof createProjectionService>;
  let service: typeof projections;
  const registry = new Registry();
  const metricValue = async (name: string) =>
    (await registry.getSingleMetric(name)!.get()).values.reduce((sum, value) => sum + value.value, 0);

  beforeAll(async () => {
    scratch = await createScratchDatabase("projector");
    db = createDatabase({ url: scratch.url, schema: NOTIFY_SCHEMA, poolMax: 6 });
    await migrateToLatest(db, NOTIFY_SCHEMA, migrations);
    pool = new pg.Pool({ connectionString: scratch.url, max: 4, options: `-c search_path=${NOTIFY_SCHEMA}` });
    const tenants = createTenantRepository(db);
    for (const id of ["acme", "other"]) {
      await db.transaction(async (trx) => {
        await tenants.create(trx, { id, name: id, plan: "testing" });
        await tenants.update(trx, id, activate);
      });
    }
    nc = await connect({ servers: testNatsUrl() });
    jsm = await nc.jetstreamManager();
    js = nc.jetstream();
    await declareEventsStream(jsm, namespace, { replicas: 1 });
    await declareProjectionsConsumer(jsm, namespace, { ackWaitMs: 30_000, replicas: 1 });
    relay = startOutboxRelay({ db, js, logger, pollIntervalMs: 200, republishAfterMs: 60_000 });
    const events = createEventOutbox({ namespace, kick: () => relay.kick() });
    sends = createNotificationService({
      store: createNotificationStore(db, pool, events),
      provider,
      metrics: createNotificationMetrics(new Registry()),
      leaseMs: 30_000,
      ttlMs: 60_000,
      testingAllowance: 1000,
    });
    projections = createProjectionService({
      db,
      reader: { listWork: () => Promise.reject(new Error("unset")) } as never,
      rebuild,
    });
    service = createProjectionService({ db, reader: createProjectionReader(db), rebuild });
    projector = startProjector({
      db,
      js,
      namespace,
      logger,
      fetchExpiresMs: 1_000,
      metrics: createProjectorMetrics(registry, { js, namespace }),
    });
  });
  afterAll(async () => {
    await projector?.stop();
    await relay?.stop();
    await nc?.drain();
    await pool?.end();
    await db?.destroy();
    await scratch?.drop();
    await deleteNamespaceStreams(namespace);
  });

  async function publish(
    tenantId: string,
    type: string,
    object: Record<string, unknown>,
    id = newEventId(),
    msgID: string | undefined = id,
  ) {
    const payload = BusEvent.encode({
      id,
      type,
      tenantId,
      occurredAt: new Date().toISOString(),
      dataJson: JSON.stringify(object),
    }).finish();
    const ack = await js.publish(eventSubject(namespace, tenantId, type), payload, msgID ? { msgID } : {});
    return { id, seq: ack.seq };
  }

  async function recorded(id: string) {
    return eventually(`event ${id} projected`, async () =>
      Boolean(await db("projection_events").first("event_id").where({ event_id: id })),
    );
  }

  async function send(key: string, outcome: ChannelOutcome) {
    nextOutcome = outcome;
    return sends
      .sendNotification(
        {
          tenantId: "acme",
          idempotencyKey: key,
          to: "+447700900123",
          type: "no_show",
          clientName: "Ana",
          serviceName: "grooming",
          actor: { actorReference: "crm", delegationReference: undefined },
          otherFields: [],
        },
        context(),
      )
      .catch(() => undefined);
  }

  async function all<T>(list: (cursor: string) => Promise<{ items: T[]; nextCursor: string }>): Promise<T[]> {
    const items: T[] = [];
    let cursor = "";
    do {
      const page = await list(cursor);
      items.push(...page.items);
      cursor = page.nextCursor;
    } while (cursor);
    return items;
  }

  const snapshot = async (tenantId: string) => ({
    work: await all((cursor) => service.listWork({ tenantId, limit: 2, cursor }, context())),
    attention: await all((cursor) => service.listAttention({ tenantId, limit: 2, cursor }, context())),
    activity: await all((cursor) => service.listActivity({ tenantId, limit: 2, cursor }, context())),
  });

  it("projects the send path's outcomes into the work ledger and removes notify's kept outbox rows", async () => {
    await send("k-sent", { kind: "sent", providerMessageId: "p-1" });
    await send("k-failed", { kind: "failed", code: "partner.recipient_undeliverable", providerCode: "131026" });
    await send("k-unknown", { kind: "unknown", reason: "timeout" });
    const work = await eventually("three work items", async () => {
      const page = await service.listWork({ tenantId: "acme", limit: 0, cursor: "" }, context());
      return page.items.length === 3 && page.items;
    });
    expect(work.map((item) => [item.state, item.reasonCode, item.type])).toEqual([
      ["unknown", "partner.action_outcome_unknown", "no_show"],
      ["failed", "partner.recipient_undeliverable", "no_show"],
      ["sent", "", "no_show"],
    ]);
    await eventually("outbox emptied by the projector", async () => (await db("outbox").count("* as n"))[0]?.n == 0);
  });

  it("announces a claim settled as unknown (its holder died) to the work ledger", async () => {
    const store = createNotificationStore(db, pool, createEventOutbox({ namespace, kick: () => relay.kick() }));
    const notificationId = newNotificationId();
    const recorded = await store.record({
      tenantId: "acme",
      idempotencyKey: "k-abandoned",
      fingerprint: "fp-abandoned",
      owner: randomUUID(),
      notificationId,
      transcriptEntryId: newTranscriptEntryId(),
      recipient: "447700900123",
      type: "reminder",
      text: "Hi",
      actorReference: "crm",
      delegationReference: null,
      requestId: "req-abandoned",
      leaseMs: 1,
      ttlMs: 60_000,
      testingAllowance: 1000,
    });
    expect(recorded.recorded).toBe(true);
    const settled = await eventually("the lease expired and the claim settled", () =>
      store.settleAbandoned("acme", "k-abandoned", "fp-abandoned"),
    );
    expect(settled).toMatchObject({ notificationId, state: "unknown" });
    const item = await eventually("the settled command in the work ledger", async () =>
      (await service.listWork({ tenantId: "acme", limit: 100, cursor: "" }, context())).items.find(
        (work) => work.notificationId === notificationId,
      ),
    );
    expect(item).toMatchObject({ type: "reminder", state: "unknown", reasonCode: "partner.action_outcome_unknown" });
  });

  it("counts the events it applies and reports none pending once it caught up", async () => {
    const before = await metricValue("notify_projected_events_total");
    const published = [];
    for (let i = 0; i < 5; i++) published.push(await publish("other", "booking.created", { booking_id: `bk_m${i}` }));
    for (const { id } of published) await recorded(id);
    await eventually(
      "the counter counts them",
      async () => (await metricValue("notify_projected_events_total")) >= before + 5,
    );
    await eventually("nothing pending", async () => (await metricValue("notify_projector_pending_events")) === 0);
  });

  it("applies an event once: a redelivery and a republish of the same id change nothing", async () => {
    const first = await publish("acme", "escalation.raised", {
      escalation_id: "esc_once",
      reason_code: "escalation.customer_requested_human",
    });
    await recorded(first.id);
    const before = await snapshot("acme");
    // A redelivery of the same message.
    expect(
      await projectOne(db, decodeFor(first.id, "escalation.raised", { escalation_id: "esc_once" }), first.seq),
    ).toBe(false);
    // The same id published again past the stream's duplicate window (another message id): a new
    // stream sequence, the same event.
    const again = await publish(
      "acme",
      "escalation.raised",
      { escalation_id: "esc_once" },
      first.id,
      `${first.id}-again`,
    );
    expect(again.seq).toBeGreaterThan(first.seq);
    const marker = await publish("acme", "booking.created", { booking_id: "bk_after" });
    await recorded(marker.id);
    const after = await snapshot("acme");
    expect(after.activity.filter((item) => item.eventId === first.id)).toHaveLength(1);
    expect(after.activity.slice(1)).toEqual(before.activity);
    expect(after.attention).toEqual(before.attention);
    expect(after.work).toEqual(before.work);
  });

  it("opens and closes attention items per the contract, also when the close is applied first", async () => {
    const opened = await publish("other", "escalation.raised", { escalation_id: "esc_1", reason_code: "escalation.x" });
    const dead = await publish("other", "webhook.endpoint_dead_lettered", {
      endpoint_id: "we_1",
      delivery_id: "del_1",
      reason_code: "webhook.endpoint_dead_lettered",
      cause: "http_5xx",
    });
    const stalled = await publish("other", "tenant.validation_failed", {
      tenant_id: "other",
      state: "stalled",
      failing_step: "validation",
      blocking_reasons: [{ code: "activation.channel_not_ready", capability: "messaging" }],
    });
    await recorded(stalled.id);
    let attention = (await snapshot("other")).attention;
    expect(
      attention.map((item) => [item.id, item.kind, item.subjectId, item.reasonCode, item.cause, item.eventId]),
    ).toEqual([
      ["activation_stalled:other", "activation_stalled", "other", "activation.channel_not_ready", "", stalled.id],
      [
        "webhook_endpoint_dead_lettered:we_1",
        "webhook_endpoint_dead_lettered",
        "we_1",
        "webhook.endpoint_dead_lettered",
        "http_5xx",
        dead.id,
      ],
      ["escalation:esc_1", "escalation", "esc_1", "escalation.x", "", opened.id],
    ]);
    await publish("other", "escalation.resolved", { escalation_id: "esc_1" });
    await publish("other", "webhook.endpoint_resumed", { endpoint_id: "we_1" });
    const live = await publish("other", "tenant.activated", { tenant_id: "other", state: "live" });
    await recorded(live.id);
    attention = (await snapshot("other")).attention;
    expect(attention).toEqual([]);

    // Out of order: the close (later sequence) applied before the open stays closed.
    await projectOne(db, decodeFor("evt_late_close", "escalation.resolved", { escalation_id: "esc_2" }), 1_000_001);
    await projectOne(db, decodeFor("evt_early_open", "escalation.raised", { escalation_id: "esc_2" }), 1_000_000);
    expect((await snapshot("other")).attention).toEqual([]);
    await db("projection_events").whereIn("event_id", ["evt_late_close", "evt_early_open"]).delete();
    await db("projection_activity").whereIn("event_id", ["evt_late_close", "evt_early_open"]).delete();
    await db("projection_attention").where({ id: "escalation:esc_2" }).delete();
  });

  it("applies a fetch's events in one statement: per work row and attention item the latest sequence wins", async () => {
    // A knex instance of its own, so only this batch's statements are counted (the relay polls `db`).
    const counted = createDatabase({ url: scratch.url, schema: NOTIFY_SCHEMA, poolMax: 1 });
    let statements = 0;
    counted.on("query", () => (statements += 1));
    // Each event occurs at 10:00:0n, n its sequence's last digit.
    const item = (id: string, seq: number, type: string, object: Record<string, unknown>) => ({
      seq,
      event: { ...decodeFor(id, type, object), occurredAt: new Date(`2026-11-24T10:00:0${seq % 10}.000Z`) },
    });
    const created = { type: "reminder", created_at: "2026-11-24T10:00:00.000Z" };
    const repeated = item("evt_b5", 2_000_005, "escalation.raised", {
      escalation_id: "esc_open",
      reason_code: "escalation.y",
    });
    const batch = [
      // Out of order within the batch: the unknown (seq 2_000_003) is the latest for ntf_batch.
      item("evt_b3", 2_000_003, "notification.unknown", { notification_id: "ntf_batch", ...created }),
      item("evt_b1", 2_000_001, "notification.sent", { notification_id: "ntf_batch", ...created }),
      item("evt_b2", 2_000_002, "escalation.raised", { escalation_id: "esc_batch", reason_code: "escalation.x" }),
      item("evt_b4", 2_000_004, "escalation.resolved", { escalation_id: "esc_batch" }),
      repeated,
      repeated, // the same event twice in one fetch (a redelivery): recorded once
    ];
    const ids = ["evt_b1", "evt_b2", "evt_b3", "evt_b4", "evt_b5"];
    try {
      const recordedNow = await applyEvents(counted, batch);
      expect(statements).toBe(1);
      expect([...recordedNow].sort()).toEqual(ids);
      const work = await db("projection_work").where({ tenant_id: "other", notification_id: "ntf_batch" });
      expect(
        work.map((row: Record<string, unknown>) => [
          row.state,
          row.seq,
          (row.created_at as Date).toISOString(),
          (row.updated_at as Date).toISOString(),
        ]),
      ).toEqual([["unknown", "2000003", "2026-11-24T10:00:00.000Z", "2026-11-24T10:00:03.000Z"]]);
      const attention = await db("projection_attention")
        .where({ tenant_id: "other" })
        .whereIn("id", ["escalation:esc_batch", "escalation:esc_open"])
        .orderBy("id");
      expect(attention.map((row: Record<string, unknown>) => [row.id, row.open, row.seq, row.event_id])).toEqual([
        ["escalation:esc_batch", false, "2000004", "evt_b4"],
        ["escalation:esc_open", true, "2000005", "evt_b5"],
      ]);
      expect(await db("projection_activity").whereIn("event_id", ids).count<{ count: string }[]>("* as count")).toEqual(
        [{ count: "5" }],
      );
      // Applied again (a redelivered fetch): nothing recorded, nothing changed.
      expect((await applyEvents(counted, batch)).size).toBe(0);
      expect(statements).toBe(2);
    } finally {
      await counted.destroy();
      await db("projection_events").whereIn("event_id", ids).delete();
      await db("projection_activity").whereIn("event_id", ids).delete();
      await db("projection_work").where({ tenant_id: "other", notification_id: "ntf_batch" }).delete();
      await db("projection_attention")
        .where({ tenant_id: "other" })
        .whereIn("id", ["escalation:esc_batch", "escalation:esc_open"])
        .delete();
    }
  });

  it("with a gather window, applies the events of the window in one statement; without one, each as it comes", async () => {
    /** A projector of its own namespace on a counted knex: how many apply statements for 5 events 50 ms apart. */
    const statementsFor = async (gatherMs: number) => {
      const ns = newNatsNamespace("gather");
      await declareEventsStream(jsm, ns, { replicas: 1 });
      await declareProjectionsConsumer(jsm, ns, { ackWaitMs: 30_000, replicas: 1 });
      const counted = createDatabase({ url: scratch.url, schema: NOTIFY_SCHEMA, poolMax: 1 });
      let applies = 0;
      counted.on("query", (query: { sql: string }) => {
        if (query.sql.includes("apply_projected_events")) applies += 1;
      });
      const gathering = startProjector({ db: counted, js, namespace: ns, logger, fetchExpiresMs: 5_000, gatherMs });
      const ids: string[] = [];
      try {
        for (let i = 0; i < 5; i++) {
          const id = newEventId();
          ids.push(id);
          const payload = BusEvent.encode({
            id,
            type: "notification.sent",
            tenantId: "other",
            occurredAt: new Date().toISOString(),
            dataJson: JSON.stringify({ notification_id: `ntf_gather_${id}`, type: "reminder", state: "sent" }),
          }).finish();
          await js.publish(eventSubject(ns, "other", "notification.sent"), payload, { msgID: id });
          await new Promise((resolve) => setTimeout(resolve, 50));
        }
        for (const id of ids) await recorded(id);
        return applies;
      } finally {
        await gathering.stop();
        await counted.destroy();
        await deleteNamespaceStreams(ns);
        // Not of this suite's stream: a rebuild from it would not bring them back.
        await db("projection_events").whereIn("event_id", ids).delete();
        await db("projection_activity").whereIn("event_id", ids).delete();
        await db("projection_work").where("notification_id", "like", "ntf_gather_%").delete();
      }
    };
    // 5 events over about 250 ms: a 2 s window takes them all in one commit...
    expect(await statementsFor(2_000)).toBe(1);
    // ...and with no window each is applied as soon as nothing more is pending: one commit each.
    expect(await statementsFor(0)).toBe(5);
  });

  it("lists activity newest first, per tenant, with ids and codes only", async () => {
    const a = await publish("other", "conversation.started", { conversation_id: "conv_1", channel: "whatsapp" });
    const b = await publish("other", "booking.cancelled", {
      booking_id: "bk_1",
      state: "cancelled",
      note: "free text here",
    });
    await recorded(b.id);
    const activity = (await snapshot("other")).activity;
    expect(
      activity.slice(0, 2).map((item) => [item.eventId, item.type, item.subjectKind, item.subjectId, item.state]),
    ).toEqual([
      [b.id, "booking.cancelled", "booking", "bk_1", "cancelled"],
      [a.id, "conversation.started", "conversation", "conv_1", ""],
    ]);
    expect(JSON.stringify(activity)).not.toContain("free text");
    const acme = (await snapshot("acme")).activity;
    expect(acme.some((item) => item.eventId === a.id)).toBe(false);
  });

  it("keeps who did a webhook console action (its actor) in the activity entry; drops an actor that is not a token", async () => {
    const paused = await publish("other", "webhook.endpoint_paused", {
      endpoint_id: "ep_act",
      actor: "console:ana@example.com",
    });
    const redriven = await publish("other", "webhook.delivery_redriven", {
      endpoint_id: "ep_act",
      delivery_id: "dlv_act",
      actor: "Ana Lopez <ana@example.com>",
    });
    const recovery = await publish("other", "webhook.endpoint_recovery_started", {
      endpoint_id: "ep_act",
      recovery_id: "rcv_act",
      state: "queued",
      actor: "console:ana@example.com",
    });
    await recorded(recovery.id);
    const activity = (await snapshot("other")).activity;
    expect(
      activity
        .slice(0, 3)
        .map((item) => [item.eventId, item.type, item.subjectKind, item.subjectId, item.state, item.actor]),
    ).toEqual([
      [
        recovery.id,
        "webhook.endpoint_recovery_started",
        "webhook_endpoint",
        "ep_act",
        "queued",
        "console:ana@example.com",
      ],
      [redriven.id, "webhook.delivery_redriven", "webhook_delivery", "dlv_act", "", ""],
      [paused.id, "webhook.endpoint_paused", "webhook_endpoint", "ep_act", "", "console:ana@example.com"],
    ]);
  });

  it("rejects a bad cursor or limit and an unknown tenant", async () => {
    await expect(service.listActivity({ tenantId: "acme", limit: 101, cursor: "" }, context())).rejects.toMatchObject({
      code: "request.invalid",
    });
    await expect(service.listWork({ tenantId: "acme", limit: 0, cursor: "nope!" }, context())).rejects.toMatchObject({
      code: "request.invalid",
    });
    await expect(service.listAttention({ tenantId: "ghost", limit: 0, cursor: "" }, context())).rejects.toMatchObject({
      code: "tenant.not_found",
    });
  });

  it("takes the same projection lock in apply_projected_events (the migration) as a rebuild does (lockExclusive)", async () => {
    const { rows } = await db.raw<{ rows: { definition: string }[] }>(
      "select pg_get_functiondef('apply_projected_events'::regproc) as definition",
    );
    expect(rows[0]!.definition).toContain(`pg_advisory_xact_lock_shared(${PROJECTION_LOCK_KEY})`);
  });

  it("rebuilds every projection from the stream to the same content", async () => {
    await publish("acme", "webhook.endpoint_dead_lettered", {
      endpoint_id: "we_9",
      reason_code: "webhook.endpoint_dead_lettered",
    });
    const last = await publish("acme", "escalation.raised", { escalation_id: "esc_9", reason_code: "escalation.x" });
    await recorded(last.id);
    const before = { acme: await snapshot("acme"), other: await snapshot("other") };
    // Three sends and the settled claim.
    expect(before.acme.work.length).toBe(4);
    expect(before.acme.attention.length).toBeGreaterThan(1);
    await db.raw(`truncate ${projectionTables.join(", ")}`);
    expect((await snapshot("acme")).activity).toEqual([]);
    const result = await projections.rebuildProjections({}, context());
    expect(Number(result.lastSequence)).toBeGreaterThanOrEqual(last.seq);
    const after = { acme: await snapshot("acme"), other: await snapshot("other") };
    expect(after).toEqual(before);
    // The live projector goes on afterwards.
    const later = await publish("acme", "booking.created", { booking_id: "bk_later" });
    await recorded(later.id);
    expect((await snapshot("acme")).activity[0]?.eventId).toBe(later.id);
  });
});

function decodeFor(id: string, type: string, object: Record<string, unknown>) {
  return { id, type, tenantId: "other", occurredAt: new Date(), object };
}

/**
 * What the webhook console reads and does beside the ledger, over a real gRPC server and client
 * on a scratch database: endpoint health and 24-hour success rate at each threshold, the hourly
 * attempt buckets, the attempt detail (error classes), the cause of a dead-letter pause and its
 * clearing on resume, and RecoverDeliveries' dry run, job creation and refusals. The recovery
 * runner itself, against a real webhooks process, is in recovery.test.ts.
 */
import { randomBytes } from "node:crypto";
import { status as Status } from "@grpc/grpc-js";
import { createScratchDatabase, type ScratchDatabase } from "@platform/local-stack/postgres-databases";
import { BusEvent, WebhookServiceService, type Endpoint } from "@platform/proto/webhooks/v1";
import { createClient, GrpcCallError, type CallOptions, type ServiceClient } from "@platform/service-kit/grpc-client";
import {
  createGrpcInstrumentation,
  instrumentService,
  startGrpcServer,
  type RunningGrpcServer,
} from "@platform/service-kit/grpc-server";
import { defaultIdempotencyOptions } from "@platform/service-kit/idempotency";
import { createLogger } from "@platform/service-kit/logger";
import { createMetricsRegistry } from "@platform/service-kit/metrics";
import { createDatabase, migrateToLatest, type Knex } from "@platform/service-kit/postgres";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { migrations } from "../migrations/index.js";
import { WEBHOOKS_SCHEMA, WEBHOOKS_SEARCH_PATH } from "../src/config.js";
import { createAttemptStore } from "../src/db/attempt-store.js";
import { createBatchedAttemptStore } from "../src/db/batched-attempt-store.js";
import { createTargetResolver } from "../src/delivery/target-resolver.js";
import { newDeliveryId, newEventId } from "../src/domain/ids.js";
import { parseSecretsKey } from "../src/domain/secret-box.js";
import { parseAllowedPorts } from "../src/domain/target-address.js";
import { createWebhookService } from "../src/grpc/webhook-service.js";

type Methods = typeof WebhookServiceService;
type RequestOf<K extends keyof Methods> = Parameters<Methods[K]["requestSerialize"]>[0];
type ResponseOf<K extends keyof Methods> = ReturnType<Methods[K]["responseDeserialize"]>;

const HOUR = 3_600_000;
const DAY = 24 * HOUR;
const delays = [1000, 1000, 1000, 1000, 1000, 1000, 1000];

describe("endpoint health, hourly stats, attempt detail, dead-letter cause and recover (gRPC)", () => {
  let scratch: ScratchDatabase;
  let db: Knex;
  let server: RunningGrpcServer;
  let client: ServiceClient<Methods>;
  let n = 0;
  /** When set, the service's clock (the stats windows are then exact). */
  let pinned: Date | undefined;
  const tenant = `ten_${randomBytes(4).toString("hex")}`;
  const key = (label = "k") => `${label}-${Date.now()}-${n++}`;

  function rpc<K extends keyof Methods>(method: K, request: RequestOf<K>): Promise<ResponseOf<K>> {
    const call = client[method] as (request: RequestOf<K>, options: CallOptions) => Promise<ResponseOf<K>>;
    return call(request, { requestId: `req-${n++}` });
  }

  async function failure(promise: Promise<unknown>): Promise<{ status: string; code: unknown; details: string }> {
    const error = await promise.then(
      () => expect.unreachable("the call succeeded"),
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(GrpcCallError);
    const e = error as GrpcCallError;
    return { status: Status[e.code], code: e.metadata.get("error-code")[0], details: e.details };
  }

  const create = async () =>
    (
      await rpc("createEndpoint", {
        tenantId: tenant,
        url: `https://hooks${n++}.example.test/events`,
        description: "receiver",
        eventTypes: ["booking.created"],
        idempotencyKey: key("create"),
      })
    ).endpoint!;

  async function seedDelivery(
    endpoint: Endpoint,
    seed: { status: string; createdAt?: Date; attempts?: number; nextAttemptAt?: Date | null },
  ): Promise<string> {
    const eventId = newEventId();
    const createdAt = seed.createdAt ?? new Date();
    const id = newDeliveryId(createdAt);
    await db("events").insert({
      id: eventId,
      tenant_id: endpoint.tenantId,
      type: "booking.created",
      occurred_at: createdAt,
      data: JSON.stringify({ booking_id: "bkg_1" }),
      livemode: true,
      received_at: createdAt,
    });
    await db("deliveries").insert({
      id,
      tenant_id: endpoint.tenantId,
      endpoint_id: endpoint.id,
      event_id: eventId,
      event_type: "booking.created",
      livemode: true,
      payload: `{"id":"${eventId}"}`,
      status: seed.status,
      attempts: seed.attempts ?? 0,
      attempts_total: seed.attempts ?? 0,
      next_attempt_at: seed.nextAttemptAt ?? null,
      generation: 1,
      created_at: createdAt,
      updated_at: createdAt,
    });
    return id;
  }

  async function seedAttempts(
    endpoint: Endpoint,
    deliveryId: string,
    attempts: { at: Date; succeeded: boolean; statusCode?: number | null; error?: string | null }[],
  ) {
    if (attempts.length === 0) return;
    const [row] = await db("attempts").where({ delivery_id: deliveryId }).max<{ max: number | null }[]>("number");
    let number = row?.max ?? 0;
    await db("attempts").insert(
      attempts.map((attempt) => ({
        delivery_id: deliveryId,
        endpoint_id: endpoint.id,
        number: ++number,
        attempted_at: attempt.at,
        duration_ms: 40,
        succeeded: attempt.succeeded,
        status_code: attempt.statusCode === undefined ? (attempt.succeeded ? 200 : 503) : attempt.statusCode,
        error: attempt.error === undefined ? (attempt.succeeded ? null : "non_2xx_status") : attempt.error,
        response_body: Buffer.from(attempt.succeeded ? "ok" : "busy"),
        response_body_truncated: false,
        // The partition key: the delivery's day.
        delivery_created_at: db("deliveries").where({ id: deliveryId }).select("created_at"),
      })),
    );
  }

  /** `succeeded` successes and `failed` failures, an hour ago. */
  async function seedOutcomes(endpoint: Endpoint, succeeded: number, failed: number) {
    const deliveryId = await seedDelivery(endpoint, { status: "succeeded" });
    const at = new Date(Date.now() - HOUR);
    await seedAttempts(endpoint, deliveryId, [
      ...Array.from({ length: succeeded }, () => ({ at, succeeded: true })),
      ...Array.from({ length: failed }, () => ({ at, succeeded: false })),
    ]);
  }

  const outboxEvents = async () =>
    (await db("outbox").orderBy("seq").select<{ payload: Buffer }[]>("payload")).map((row) => {
      const event = BusEvent.decode(row.payload);
      return { type: event.type, object: JSON.parse(event.dataJson) as Record<string, unknown> };
    });

  beforeAll(async () => {
    scratch = await createScratchDatabase("whinsight");
    db = createDatabase({ url: scratch.url, schema: WEBHOOKS_SCHEMA, searchPath: WEBHOOKS_SEARCH_PATH });
    await migrateToLatest(db, WEBHOOKS_SCHEMA, migrations);
    const logger = createLogger("webhooks", "silent");
    const instrumentation = createGrpcInstrumentation(logger, createMetricsRegistry("webhooks"));
    server = await startGrpcServer({
      host: "127.0.0.1",
      port: 0,
      instrumentation,
      services: [
        {
          definition: WebhookServiceService,
          implementation: instrumentService(
            WebhookServiceService,
            createWebhookService({
              db,
              keyRing: parseSecretsKey(randomBytes(32).toString("base64")),
              queue: { enqueue: () => Promise.resolve() },
              targets: createTargetResolver({
                allowPrivate: false,
                allowedPorts: parseAllowedPorts("443"),
                lookup: () => Promise.resolve([{ address: "93.184.215.14", family: 4 }]),
              }),
              idempotency: defaultIdempotencyOptions,
              events: { namespace: "winsight.", kick: () => undefined },
              clock: () => pinned ?? new Date(),
            }),
            instrumentation,
          ),
        },
      ],
    });
    client = createClient(WebhookServiceService, `127.0.0.1:${server.port}`, { timeoutMs: 10_000 });
  });

  afterAll(async () => {
    client?.close();
    await server?.shutdown(1_000);
    await db?.destroy();
    await scratch?.drop();
  });

  describe("health and the 24-hour success rate", () => {
    it.each([
      // [succeeded, failed, health, rate]
      [0, 0, "healthy", undefined],
      [19, 1, "healthy", 0.95],
      [20, 1, "healthy", 20 / 21],
      [17, 1, "degraded", 17 / 18],
      [18, 2, "degraded", 0.9],
      [10, 10, "degraded", 0.5],
      [9, 11, "failing", 0.45],
      [0, 3, "failing", 0],
    ] as const)("%i succeeded, %i failed: %s", async (succeeded, failed, health, rate) => {
      const endpoint = await create();
      await seedOutcomes(endpoint, succeeded, failed);
      const { endpoint: read } = await rpc("getEndpoint", { tenantId: tenant, endpointId: endpoint.id });
      expect(read).toMatchObject({ health, attempts24h: String(succeeded + failed) });
      expect(read!.successRate24h).toBe(rate);
    });

    it("a paused endpoint is paused; attempts older than 24 hours do not count; the list carries it too", async () => {
      const endpoint = await create();
      const deliveryId = await seedDelivery(endpoint, { status: "dead_lettered" });
      await seedAttempts(endpoint, deliveryId, [
        { at: new Date(Date.now() - DAY - HOUR), succeeded: false },
        { at: new Date(Date.now() - HOUR), succeeded: true },
      ]);
      const listed = async () =>
        (await rpc("listEndpoints", { tenantId: tenant, limit: 100, cursor: "" })).endpoints.find(
          (e) => e.id === endpoint.id,
        );
      expect(await listed()).toMatchObject({ health: "healthy", successRate24h: 1, attempts24h: "1" });
      const paused = await rpc("pauseEndpoint", { tenantId: tenant, endpointId: endpoint.id, idempotencyKey: key() });
      expect(paused.endpoint).toMatchObject({ paused: true, health: "paused", successRate24h: 1 });
      expect(await listed()).toMatchObject({ health: "paused" });
    });
  });

  describe("hourly attempt buckets", () => {
    it("24 buckets of one hour from the window's start, exact at the edges", async () => {
      const endpoint = await create();
      const now = new Date("2026-11-24T10:30:00.000Z");
      const start = now.getTime() - DAY;
      const at = (ms: number) => new Date(start + ms);
      const deliveryId = await seedDelivery(endpoint, { status: "succeeded" });
      await seedAttempts(endpoint, deliveryId, [
        { at: at(-1), succeeded: false }, // before the window
        { at: at(0), succeeded: true }, // bucket 0, its first instant
        { at: at(HOUR - 1), succeeded: false }, // bucket 0, its last
        { at: at(HOUR), succeeded: true }, // bucket 1
        { at: at(12 * HOUR + 5), succeeded: true },
        { at: at(12 * HOUR + 6), succeeded: true },
        { at: at(12 * HOUR + 7), succeeded: false, statusCode: null, error: "timeout" },
        { at: at(DAY - 1), succeeded: false }, // bucket 23
        { at: now, succeeded: true }, // the window's end belongs to bucket 23
        { at: new Date(now.getTime() + 1), succeeded: true }, // after the window
      ]);
      pinned = now;
      try {
        const stats = await rpc("getEndpointStats", { tenantId: tenant, endpointId: endpoint.id });
        expect(stats.hourly).toHaveLength(24);
        expect(stats.hourly[0]).toEqual({ start: "2026-11-23T10:30:00.000Z", succeeded: "1", failed: "1" });
        expect(stats.hourly[1]).toEqual({ start: "2026-11-23T11:30:00.000Z", succeeded: "1", failed: "0" });
        expect(stats.hourly[12]).toEqual({ start: "2026-11-23T22:30:00.000Z", succeeded: "2", failed: "1" });
        expect(stats.hourly[23]).toEqual({ start: "2026-11-24T09:30:00.000Z", succeeded: "1", failed: "1" });
        const others = stats.hourly.filter((_, i) => ![0, 1, 12, 23].includes(i));
        expect(others.every((bucket) => bucket.succeeded === "0" && bucket.failed === "0")).toBe(true);
        // The buckets add up to the window's attempts.
        const sum = stats.hourly.reduce((total, b) => total + Number(b.succeeded) + Number(b.failed), 0);
        expect(String(sum)).toBe(stats.attempts);
        expect(stats.attempts).toBe("8");
      } finally {
        pinned = undefined;
      }
    });
  });

  describe("attempt detail", () => {
    it("every attempt with its time, status, duration, error class and body; the next retry's due time", async () => {
      const endpoint = await create();
      const due = new Date(Date.now() + 10 * 60_000);
      const deliveryId = await seedDelivery(endpoint, { status: "awaiting_retry", attempts: 6, nextAttemptAt: due });
      const base = Date.now();
      const t = (i: number) => new Date(base - (10 - i) * 60_000);
      await seedAttempts(endpoint, deliveryId, [
        { at: t(0), succeeded: false, statusCode: null, error: "timeout" },
        { at: t(1), succeeded: false, statusCode: null, error: "tls_error" },
        { at: t(2), succeeded: false, statusCode: null, error: "target_not_allowed" },
        { at: t(3), succeeded: false, statusCode: null, error: "connection_error" },
        { at: t(4), succeeded: false, statusCode: 404 },
        { at: t(5), succeeded: false, statusCode: 502 },
      ]);
      const detail = await rpc("getDelivery", { tenantId: tenant, endpointId: endpoint.id, deliveryId });
      expect(detail.delivery!.nextAttemptAt).toBe(due.toISOString());
      expect(detail.attempts.map((a) => [a.number, a.statusCode, a.error, a.errorClass])).toEqual([
        [1, undefined, "timeout", "timeout"],
        [2, undefined, "tls_error", "tls"],
        [3, undefined, "target_not_allowed", "refused_target"],
        [4, undefined, "connection_error", "connection"],
        [5, 404, "non_2xx_status", "http_4xx"],
        [6, 502, "non_2xx_status", "http_5xx"],
      ]);
      expect(detail.attempts[0]).toMatchObject({ attemptedAt: t(0).toISOString(), durationMs: 40, succeeded: false });
      expect(Buffer.from(detail.attempts[5]!.responseBody).toString()).toBe("busy");
    });
  });

  describe("the cause of a dead-letter pause", () => {
    it.each([
      ["single", 503, "non_2xx_status", "http_5xx"],
      ["batched", null, "timeout", "timeout"],
    ] as const)(
      "%s writer: the endpoint carries the cause and when; the fact carries it; resume clears it",
      async (writer, statusCode, error, cause) => {
        const endpoint = await create();
        const deliveryId = await seedDelivery(endpoint, {
          status: "awaiting_retry",
          attempts: 7,
          nextAttemptAt: new Date(),
        });
        const events = { namespace: "winsight.", kick: () => undefined };
        const recorder = writer === "single" ? createAttemptStore(db, events) : createBatchedAttemptStore(db, events);
        const before = Date.now();
        const recorded = await recorder.recordAttempt(
          deliveryId,
          {
            attemptedAt: new Date(),
            durationMs: 12,
            succeeded: false,
            statusCode,
            error,
            responseBody: Buffer.alloc(0),
            responseBodyTruncated: false,
          },
          delays,
        );
        expect(recorded.deadLettered).toBe(true);
        const { endpoint: read } = await rpc("getEndpoint", { tenantId: tenant, endpointId: endpoint.id });
        expect(read).toMatchObject({
          paused: true,
          health: "paused",
          attentionReason: "webhook.endpoint_dead_lettered",
          attentionCause: cause,
        });
        expect(new Date(read!.attentionSince!).getTime()).toBeGreaterThanOrEqual(before - 1000);
        const fact = (await outboxEvents()).find(
          (e) => e.type === "webhook.endpoint_dead_lettered" && e.object.endpoint_id === endpoint.id,
        );
        expect(fact?.object).toEqual({
          endpoint_id: endpoint.id,
          delivery_id: deliveryId,
          reason_code: "webhook.endpoint_dead_lettered",
          cause,
        });
        const resumed = await rpc("resumeEndpoint", {
          tenantId: tenant,
          endpointId: endpoint.id,
          idempotencyKey: key(),
        });
        expect(resumed.endpoint).toMatchObject({ paused: false, attentionReason: undefined });
        expect(resumed.endpoint!.attentionCause).toBeUndefined();
        expect(resumed.endpoint!.attentionSince).toBeUndefined();
      },
    );
  });

  describe("actors", () => {
    it("every console action writes its activity fact with the actor, in the action's transaction; replays write none", async () => {
      const actor = "console:ana@example.com";
      const createKey = key("create");
      const created = await rpc("createEndpoint", {
        tenantId: tenant,
        url: `https://hooks${n++}.example.test/events`,
        description: "receiver",
        eventTypes: ["booking.created"],
        idempotencyKey: createKey,
        actor,
      });
      const endpointId = created.endpoint!.id;
      const on = { tenantId: tenant, endpointId };
      await rpc("updateEndpoint", {
        ...on,
        description: "renamed",
        eventTypes: undefined,
        idempotencyKey: key(),
        actor,
      });
      await rpc("rotateSecret", { ...on, idempotencyKey: key(), actor });
      const test = await rpc("sendTestDelivery", { ...on, eventType: "booking.created", idempotencyKey: key(), actor });
      await rpc("pauseEndpoint", { ...on, idempotencyKey: key(), actor });
      const dead = await seedDelivery(created.endpoint!, { status: "dead_lettered", attempts: 8 });
      await rpc("redriveDelivery", { ...on, deliveryId: dead, idempotencyKey: key(), actor });
      await rpc("resumeEndpoint", { ...on, idempotencyKey: key() }); // no actor given
      const recovery = await rpc("recoverDeliveries", {
        ...on,
        since: new Date(Date.now() - HOUR).toISOString(),
        dryRun: false,
        idempotencyKey: key(),
        actor,
      });
      await rpc("deleteEndpoint", { ...on, idempotencyKey: key(), actor });
      // A replay (even naming another actor: the actor is not part of the request's fingerprint) adds nothing.
      const replay = await rpc("createEndpoint", {
        tenantId: tenant,
        url: created.endpoint!.url,
        description: "receiver",
        eventTypes: ["booking.created"],
        idempotencyKey: createKey,
        actor: "console:bob@example.com",
      });
      expect(replay.replayed).toBe(true);
      const facts = (await outboxEvents()).filter((e) => e.object.endpoint_id === endpointId);
      expect(facts).toEqual([
        { type: "webhook.endpoint_created", object: { endpoint_id: endpointId, actor } },
        { type: "webhook.endpoint_updated", object: { endpoint_id: endpointId, actor } },
        { type: "webhook.endpoint_secret_rotated", object: { endpoint_id: endpointId, actor } },
        {
          type: "webhook.test_delivery_sent",
          object: { endpoint_id: endpointId, delivery_id: test.delivery!.id, actor },
        },
        { type: "webhook.endpoint_paused", object: { endpoint_id: endpointId, actor } },
        { type: "webhook.delivery_redriven", object: { endpoint_id: endpointId, delivery_id: dead, actor } },
        { type: "webhook.endpoint_resumed", object: { endpoint_id: endpointId } },
        {
          type: "webhook.endpoint_recovery_started",
          object: { endpoint_id: endpointId, recovery_id: recovery.recovery!.id, state: "completed", actor },
        },
        { type: "webhook.endpoint_deleted", object: { endpoint_id: endpointId, actor } },
      ]);
      expect(await failure(rpc("pauseEndpoint", { ...on, idempotencyKey: key(), actor: "Ana Lopez" }))).toMatchObject({
        status: "INVALID_ARGUMENT",
        code: "request.invalid",
      });
    });
  });

  describe("RecoverDeliveries", () => {
    /** An endpoint with deliveries of every kind before and after `since` (an hour ago). */
    async function seedRecoverable() {
      const endpoint = await create();
      const other = await create();
      const since = new Date(Date.now() - HOUR);
      const after = (ms: number) => new Date(since.getTime() + ms);
      const expected = [
        await seedDelivery(endpoint, { status: "dead_lettered", createdAt: after(0), attempts: 8 }),
        await seedDelivery(endpoint, { status: "dead_lettered", createdAt: after(60_000), attempts: 8 }),
        await seedDelivery(endpoint, { status: "dead_lettered", createdAt: after(120_000), attempts: 8 }),
        await seedDelivery(endpoint, {
          status: "awaiting_retry",
          createdAt: after(180_000),
          attempts: 2,
          nextAttemptAt: new Date(Date.now() + HOUR),
        }),
        await seedDelivery(endpoint, {
          status: "awaiting_retry",
          createdAt: after(240_000),
          attempts: 1,
          nextAttemptAt: new Date(Date.now() + HOUR),
        }),
      ];
      // Not recovered: succeeded, pending, held, older than since, another endpoint's.
      await seedDelivery(endpoint, { status: "succeeded", createdAt: after(1000), attempts: 1 });
      await seedDelivery(endpoint, { status: "pending", createdAt: after(2000), nextAttemptAt: new Date() });
      await seedDelivery(endpoint, { status: "held", createdAt: after(3000) });
      await seedDelivery(endpoint, { status: "dead_lettered", createdAt: after(-1), attempts: 8 });
      await seedDelivery(endpoint, { status: "awaiting_retry", createdAt: after(-HOUR), attempts: 3 });
      await seedDelivery(other, { status: "dead_lettered", createdAt: after(5000), attempts: 8 });
      return { endpoint, since, expected };
    }

    it("a dry run counts exactly the failed and dead-lettered deliveries since, and until when given", async () => {
      const { endpoint, since } = await seedRecoverable();
      const dry = (until?: string) =>
        rpc("recoverDeliveries", {
          tenantId: tenant,
          endpointId: endpoint.id,
          since: since.toISOString(),
          until,
          dryRun: true,
          idempotencyKey: key("dry"),
        });
      const all = await dry();
      expect(all).toMatchObject({ wouldRecover: "5", replayed: false });
      expect(all.recovery).toBeUndefined();
      expect((await dry(new Date(since.getTime() + 120_000).toISOString())).wouldRecover).toBe("2");
      expect(await db("recoveries").where({ endpoint_id: endpoint.id }).count<{ count: string }[]>()).toEqual([
        { count: "0" },
      ]);
    });

    it("creates a queued recovery of exactly those deliveries, announced with its actor; replays; one at a time", async () => {
      const { endpoint, since, expected } = await seedRecoverable();
      const request = {
        tenantId: tenant,
        endpointId: endpoint.id,
        since: since.toISOString(),
        dryRun: false,
        idempotencyKey: key("recover"),
        actor: "console:ana@example.com",
      };
      const first = await rpc("recoverDeliveries", request);
      expect(first).toMatchObject({
        wouldRecover: "5",
        replayed: false,
        recovery: {
          endpointId: endpoint.id,
          since: since.toISOString(),
          state: "queued",
          total: "5",
          done: "0",
          redriven: "0",
          skipped: "0",
          actor: "console:ana@example.com",
        },
      });
      const id = first.recovery!.id;
      expect(id).toMatch(/^rcv_[0-9a-f]{24}$/);
      const items = await db("recovery_items").where({ recovery_id: id }).orderBy("seq").pluck("delivery_id");
      expect(items).toEqual(expected);
      const again = await rpc("recoverDeliveries", request);
      expect(again).toMatchObject({ replayed: true, recovery: { id } });
      expect(
        await failure(rpc("recoverDeliveries", { ...request, since: new Date(since.getTime() + 1).toISOString() })),
      ).toMatchObject({ status: "FAILED_PRECONDITION", code: "idempotency.key_reused" });
      const busy = await failure(rpc("recoverDeliveries", { ...request, idempotencyKey: key("second") }));
      expect(busy).toMatchObject({ status: "FAILED_PRECONDITION", code: "webhook.recovery_in_progress" });
      expect(busy.details).toContain(id);
      const started = (await outboxEvents()).filter(
        (e) => e.type === "webhook.endpoint_recovery_started" && e.object.endpoint_id === endpoint.id,
      );
      expect(started.map((e) => e.object)).toEqual([
        { endpoint_id: endpoint.id, recovery_id: id, state: "queued", actor: "console:ana@example.com" },
      ]);
      const read = await rpc("getRecovery", { tenantId: tenant, endpointId: endpoint.id, recoveryId: id });
      expect(read.recovery).toEqual(first.recovery);
    });

    it("covering nothing, the recovery is completed at once", async () => {
      const endpoint = await create();
      const answer = await rpc("recoverDeliveries", {
        tenantId: tenant,
        endpointId: endpoint.id,
        since: new Date(Date.now() - HOUR).toISOString(),
        dryRun: false,
        idempotencyKey: key(),
      });
      expect(answer.recovery).toMatchObject({ state: "completed", total: "0", done: "0" });
      expect(answer.recovery!.finishedAt).toBeDefined();
      const second = await rpc("recoverDeliveries", {
        tenantId: tenant,
        endpointId: endpoint.id,
        since: new Date(Date.now() - 2 * HOUR).toISOString(),
        dryRun: false,
        idempotencyKey: key(),
      });
      const listed = await rpc("listRecoveries", { tenantId: tenant, endpointId: endpoint.id, limit: 0 });
      expect(listed.recoveries.map((r) => r.id)).toEqual([second.recovery!.id, answer.recovery!.id]);
      const one = await rpc("listRecoveries", { tenantId: tenant, endpointId: endpoint.id, limit: 1 });
      expect(one.recoveries).toEqual([second.recovery]);
    });

    it("refuses since in the future, older than the retention, a paused endpoint, unknown ids", async () => {
      const endpoint = await create();
      const recover = (since: string, extra: Record<string, unknown> = {}) =>
        rpc("recoverDeliveries", {
          tenantId: tenant,
          endpointId: endpoint.id,
          since,
          dryRun: false,
          idempotencyKey: key(),
          ...extra,
        });
      expect(await failure(recover(new Date(Date.now() + 60_000).toISOString()))).toEqual({
        status: "INVALID_ARGUMENT",
        code: "webhook.recovery_window_invalid",
        details: "since is in the future",
      });
      const old = await failure(recover(new Date(Date.now() - 31 * DAY).toISOString()));
      expect(old).toMatchObject({ status: "INVALID_ARGUMENT", code: "webhook.recovery_window_invalid" });
      expect(old.details).toContain("older than the 30-day retention");
      expect(await failure(recover("last tuesday"))).toMatchObject({ code: "webhook.recovery_window_invalid" });
      expect(await failure(recover(new Date().toISOString(), { actor: "x\ny" }))).toMatchObject({
        code: "request.invalid",
      });
      await rpc("pauseEndpoint", { tenantId: tenant, endpointId: endpoint.id, idempotencyKey: key() });
      expect(await failure(recover(new Date(Date.now() - HOUR).toISOString()))).toMatchObject({
        status: "FAILED_PRECONDITION",
        code: "webhook.endpoint_paused",
      });
      // A dry run of a paused endpoint still counts.
      expect((await recover(new Date(Date.now() - HOUR).toISOString(), { dryRun: true })).wouldRecover).toBe("0");
      expect(
        await failure(rpc("getRecovery", { tenantId: tenant, endpointId: endpoint.id, recoveryId: "rcv_nope" })),
      ).toMatchObject({ status: "NOT_FOUND", code: "webhook.recovery_not_found" });
      expect(
        await failure(
          rpc("recoverDeliveries", {
            tenantId: tenant,
            endpointId: "ep_000000000000000000000000",
            since: new Date().toISOString(),
            dryRun: true,
            idempotencyKey: key(),
          }),
        ),
      ).toMatchObject({ status: "NOT_FOUND", code: "webhook.endpoint_not_found" });
    });
  });
});

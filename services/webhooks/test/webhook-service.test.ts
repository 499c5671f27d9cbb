import { randomBytes } from "node:crypto";
import { Writable } from "node:stream";
import { status as Status } from "@grpc/grpc-js";
import { createScratchDatabase, type ScratchDatabase } from "@platform/local-stack/postgres-databases";
import { WebhookServiceService, type CreateEndpointRequest, type Endpoint } from "@platform/proto/webhooks/v1";
import { createClient, GrpcCallError, type CallOptions, type ServiceClient } from "@platform/service-kit/grpc-client";
import { HealthChecker } from "@platform/service-kit/grpc-health";
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
import { createTargetResolver, type TargetRefusal } from "../src/delivery/target-resolver.js";
import { parseAllowedPorts } from "../src/domain/target-address.js";
import { newDeliveryId, newEventId } from "../src/domain/ids.js";
import { openSecret, parseSecretsKey, type SecretKeyRing } from "../src/domain/secret-box.js";
import type { DeliveryJob } from "../src/domain/delivery-job.js";
import { createWebhookService } from "../src/grpc/webhook-service.js";
import { BusEvent } from "@platform/proto/webhooks/v1";
import { literalHost, refusedTargets, stubLookup } from "./refused-targets.js";

type Methods = typeof WebhookServiceService;
type RequestOf<K extends keyof Methods> = Parameters<Methods[K]["requestSerialize"]>[0];
type ResponseOf<K extends keyof Methods> = ReturnType<Methods[K]["responseDeserialize"]>;

/**
 * webhooks.v1.WebhookService over a real gRPC server and client, over a scratch database with the
 * webhooks migrations. The queue port records the jobs it is given (the JetStream queue is
 * tested with the pipeline); names resolve through an injected lookup.
 */
describe("webhooks.v1.WebhookService over gRPC", () => {
  let scratch: ScratchDatabase;
  let db: Knex;
  let server: RunningGrpcServer;
  let client: ServiceClient<Methods>;
  let keyRing: SecretKeyRing;
  const logLines: string[] = [];
  const jobs: DeliveryJob[] = [];
  let failEnqueue = false;
  let n = 0;
  const tenant = `ten_${randomBytes(4).toString("hex")}`;
  const other = `ten_${randomBytes(4).toString("hex")}`;
  const key = (label = "k") => `${label}-${Date.now()}-${n++}`;

  /** Names under .test resolve to a public address; private.test to 10.0.0.1; .ssrf.test as the table says. */
  const ssrfLookup = stubLookup();
  const refusals: TargetRefusal[] = [];
  const lookup = (hostname: string) =>
    hostname.endsWith(".ssrf.test")
      ? ssrfLookup(hostname)
      : Promise.resolve(
          hostname.startsWith("private.")
            ? [{ address: "10.0.0.1", family: 4 }]
            : hostname.startsWith("loopback.")
              ? [{ address: "127.0.0.1", family: 4 }]
              : [{ address: "93.184.215.14", family: 4 }],
        );

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

  const createRequest = (overrides: Partial<CreateEndpointRequest> = {}): CreateEndpointRequest => ({
    tenantId: tenant,
    url: `https://hooks${n++}.example.test/events`,
    description: "receiver",
    eventTypes: ["booking.created", "capability.*"],
    idempotencyKey: key("create"),
    ...overrides,
  });
  const create = async (overrides: Partial<CreateEndpointRequest> = {}) =>
    rpc("createEndpoint", createRequest(overrides));

  interface SeedDelivery {
    endpoint: Endpoint;
    status?: string;
    type?: string;
    attempts?: number;
    attemptsTotal?: number;
    generation?: number;
    createdAgoMs?: number;
  }

  async function seedDelivery(seed: SeedDelivery): Promise<string> {
    const eventId = newEventId();
    const createdAt = new Date(Date.now() - (seed.createdAgoMs ?? 0));
    const id = newDeliveryId(createdAt);
    const type = seed.type ?? "booking.created";
    await db("events").insert({
      id: eventId,
      tenant_id: seed.endpoint.tenantId,
      type,
      occurred_at: createdAt,
      data: JSON.stringify({ booking_id: "bkg_1" }),
      livemode: true,
      received_at: createdAt,
    });
    const status = seed.status ?? "pending";
    await db("deliveries").insert({
      id,
      tenant_id: seed.endpoint.tenantId,
      endpoint_id: seed.endpoint.id,
      event_id: eventId,
      event_type: type,
      livemode: true,
      payload: `{"id":"${eventId}","type":"${type}"}`,
      status,
      attempts: seed.attempts ?? 0,
      attempts_total: seed.attemptsTotal ?? seed.attempts ?? 0,
      next_attempt_at: status === "pending" || status === "awaiting_retry" ? createdAt : null,
      generation: seed.generation ?? 1,
      created_at: createdAt,
      updated_at: createdAt,
    });
    return id;
  }

  async function seedAttempt(
    deliveryId: string,
    endpointId: string,
    attempt: { number: number; agoMs: number; durationMs: number; succeeded: boolean; statusCode?: number },
  ) {
    await db("attempts").insert({
      delivery_id: deliveryId,
      endpoint_id: endpointId,
      number: attempt.number,
      attempted_at: new Date(Date.now() - attempt.agoMs),
      duration_ms: attempt.durationMs,
      succeeded: attempt.succeeded,
      status_code: attempt.statusCode ?? null,
      error: attempt.succeeded ? null : "non_2xx_status",
      response_body: Buffer.from(attempt.succeeded ? "ok" : "nope \u00e9"),
      response_body_truncated: false,
      // The partition key: the delivery's day.
      delivery_created_at: db("deliveries").where({ id: deliveryId }).select("created_at"),
    });
  }

  let relayKicks = 0;
  /** The internal events this service wrote to its outbox for the tenant projections. */
  const outboxEvents = async () =>
    (await db("outbox").orderBy("seq").select<{ subject: string; payload: Buffer }[]>("subject", "payload")).map(
      (row) => {
        const event = BusEvent.decode(row.payload);
        return { subject: row.subject, type: event.type, object: JSON.parse(event.dataJson) as unknown };
      },
    );

  beforeAll(async () => {
    scratch = await createScratchDatabase("whsvc");
    db = createDatabase({ url: scratch.url, schema: WEBHOOKS_SCHEMA, searchPath: WEBHOOKS_SEARCH_PATH });
    await migrateToLatest(db, WEBHOOKS_SCHEMA, migrations);
    keyRing = parseSecretsKey(randomBytes(32).toString("base64"));
    const sink = new Writable({
      write(chunk: Buffer, _encoding, done) {
        logLines.push(...chunk.toString().split("\n").filter(Boolean));
        done();
      },
    });
    const logger = createLogger("webhooks", "debug", sink);
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
              keyRing,
              queue: {
                enqueue(batch) {
                  if (failEnqueue) return Promise.reject(new Error("nats down"));
                  jobs.push(...batch);
                  return Promise.resolve();
                },
              },
              targets: createTargetResolver({
                allowPrivate: false,
                allowedPorts: parseAllowedPorts("8443"),
                lookup,
                onRefusal: (refusal) => refusals.push(refusal),
              }),
              idempotency: defaultIdempotencyOptions,
              events: { namespace: "wsvc.", kick: () => (relayKicks += 1) },
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

  it("reports SERVING for webhooks.v1.WebhookService", async () => {
    const health = new HealthChecker(`127.0.0.1:${server.port}`);
    expect(await health.check("webhooks.v1.WebhookService")).toBe("SERVING");
    health.close();
  });

  describe("CreateEndpoint", () => {
    it("creates an endpoint pinned to 2026-07-01 and answers its secret once; the row holds it sealed", async () => {
      const request = createRequest({ url: "https://Hooks.Example.test:443/a", description: "  main  " });
      const { endpoint, secret, replayed } = await rpc("createEndpoint", request);
      expect(replayed).toBe(false);
      expect(secret).toMatch(/^whsec_[A-Za-z0-9]{44}$/);
      expect(endpoint).toEqual({
        id: expect.stringMatching(/^ep_[0-9a-f]{24}$/) as string,
        tenantId: tenant,
        url: "https://hooks.example.test/a",
        description: "main",
        eventTypes: ["booking.created", "capability.*"],
        apiVersion: "2026-07-01",
        paused: false,
        version: "1",
        createdAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/) as string,
        updatedAt: endpoint!.createdAt,
        health: "healthy",
        attempts24h: "0",
      });
      const row = (await db("endpoints").where({ id: endpoint!.id }).first()) as Record<string, unknown>;
      expect(JSON.stringify(row)).not.toContain(secret.slice(6));
      expect(row.secret_sealed).toMatch(/^v1\.k1\./);
      expect(openSecret(keyRing, row.secret_sealed as string, endpoint!.id)).toBe(secret);
      expect(() => openSecret(keyRing, row.secret_sealed as string, "ep_other")).toThrow();
      // Neither the idempotency record nor any log line holds the plaintext.
      const stored: unknown = await db("idempotency_keys")
        .where({ scope: tenant, key: request.idempotencyKey })
        .first();
      expect(JSON.stringify(stored)).not.toContain(secret.slice(6));
      expect(logLines.join("\n")).not.toContain(secret.slice(6));
      expect(logLines.some((line) => line.includes('"endpoint created"'))).toBe(true);
    });

    it("replays a repeat with the same key: the same endpoint and the same secret, one row", async () => {
      const request = createRequest();
      const first = await rpc("createEndpoint", request);
      const again = await rpc("createEndpoint", request);
      expect(again).toEqual({ ...first, replayed: true });
      expect(Number((await db("endpoints").count({ c: "*" }).where({ url: request.url }))[0]!.c)).toBe(1);
      expect(await failure(rpc("createEndpoint", { ...request, description: "other" }))).toMatchObject({
        status: "FAILED_PRECONDITION",
        code: "idempotency.key_reused",
      });
      // The same key under another tenant is another command.
      const elsewhere = await rpc("createEndpoint", { ...request, tenantId: other });
      expect(elsewhere.replayed).toBe(false);
      expect(elsewhere.endpoint!.id).not.toBe(first.endpoint!.id);
    });

    it.each([
      ["http URL", { url: "http://hooks.example.test/x" }, "webhook.endpoint_invalid", /https/],
      ["non-URL", { url: "hooks.example.test" }, "webhook.endpoint_invalid", /absolute URL/],
      ["no filters", { eventTypes: [] }, "webhook.endpoint_invalid", /at least one/],
      ["unknown type", { eventTypes: ["booking.exploded"] }, "webhook.event_type_unknown", /not an event type/],
      ["unknown family", { eventTypes: ["nope.*"] }, "webhook.event_type_unknown", /no event family/],
      ["coming soon", { eventTypes: ["invoice.issued"] }, "webhook.event_type_not_subscribable", /coming soon/],
      ["mixed problems", { eventTypes: ["invoice.issued", "nope.x"] }, "webhook.endpoint_invalid", /coming soon/],
      [
        "private target",
        { url: "https://private.example.test/x" },
        "webhook.target_not_allowed",
        /10\.0\.0\.1|private/,
      ],
      ["loopback target", { url: "https://loopback.example.test/x" }, "webhook.target_not_allowed", /loopback/],
      ["loopback literal", { url: "https://127.0.0.1/x" }, "webhook.target_not_allowed", /loopback/],
    ])("refuses a %s with INVALID_ARGUMENT %s", async (_name, overrides, code, detail) => {
      const request = createRequest(overrides);
      const refused = await failure(rpc("createEndpoint", request));
      expect(refused).toMatchObject({ status: "INVALID_ARGUMENT", code });
      expect(refused.details).toMatch(detail);
      // A refusal does not use up the key.
      const fixed = await rpc("createEndpoint", createRequest({ idempotencyKey: request.idempotencyKey }));
      expect(fixed.replayed).toBe(false);
    });
  });

  describe("the SSRF guard at creation and update (every range, a DNS stub)", () => {
    const cases = refusedTargets.flatMap((row) => [
      { ...row, how: "a name resolving to", host: row.hostname },
      { ...row, how: "the literal", host: literalHost(row.address) },
    ]);

    it.each(cases)("refuses $how $address ($range) with 400 webhook.target_not_allowed", async (row) => {
      const url = `https://${row.host}/hook`;
      const before = refusals.length;
      const created = await failure(rpc("createEndpoint", createRequest({ url })));
      expect(created).toMatchObject({ status: "INVALID_ARGUMENT", code: "webhook.target_not_allowed" });
      expect(created.details).toContain(row.refusal.replace("_", "-"));
      // An update to the same URL is refused the same way, and the endpoint keeps its URL.
      const { endpoint } = await create();
      const updated = await failure(
        rpc("updateEndpoint", {
          tenantId: tenant,
          endpointId: endpoint!.id,
          url,
          eventTypes: undefined,
          idempotencyKey: key("ssrf"),
        }),
      );
      expect(updated).toMatchObject({ status: "INVALID_ARGUMENT", code: "webhook.target_not_allowed" });
      expect((await rpc("getEndpoint", { tenantId: tenant, endpointId: endpoint!.id })).endpoint!.url).toBe(
        endpoint!.url,
      );
      expect(refusals.slice(before)).toEqual([row.refusal, row.refusal]);
    });

    it.each([
      ["a name with one loopback answer among public ones", "https://mixed.ssrf.test/hook", /loopback/],
      ["a name that does not resolve", "https://nowhere.ssrf.test/hook", /does not resolve/],
      ["port 8080 (not in WEBHOOKS_ALLOWED_PORTS)", "https://public.ssrf.test:8080/hook", /port 8080.*443,8443/],
      ["port 22", "https://public.ssrf.test:22/hook", /port 22 /],
    ])("refuses %s", async (_name, url, detail) => {
      const refused = await failure(rpc("createEndpoint", createRequest({ url })));
      expect(refused).toMatchObject({ status: "INVALID_ARGUMENT", code: "webhook.target_not_allowed" });
      expect(refused.details).toMatch(detail);
    });

    it("accepts public names and addresses on 443 and on a port WEBHOOKS_ALLOWED_PORTS lists", async () => {
      for (const url of [
        "https://public.ssrf.test/hook",
        "https://public.ssrf.test:8443/hook",
        "https://8.8.8.8/hook",
        "https://[2606:4700:4700::1111]/hook",
        "https://[::ffff:8.8.8.8]/hook",
      ]) {
        const { endpoint } = await create({ url });
        expect(endpoint!.url).toBe(new URL(url).href);
      }
    });
  });

  describe("GetEndpoint and ListEndpoints", () => {
    it("reads an endpoint without any secret, and only for its tenant", async () => {
      const { endpoint } = await create();
      const read = await rpc("getEndpoint", { tenantId: tenant, endpointId: endpoint!.id });
      expect(read).toEqual({ endpoint });
      expect(JSON.stringify(read)).not.toMatch(/whsec_|secret/i);
      for (const request of [
        { tenantId: other, endpointId: endpoint!.id },
        { tenantId: tenant, endpointId: "ep_000000000000000000000000" },
        { tenantId: tenant, endpointId: "nope" },
      ]) {
        expect(await failure(rpc("getEndpoint", request))).toMatchObject({
          status: "NOT_FOUND",
          code: "webhook.endpoint_not_found",
        });
      }
    });

    it("pages newest first, visiting every endpoint exactly once while others are created", async () => {
      const pager = `ten_pager_${randomBytes(3).toString("hex")}`;
      const created: string[] = [];
      for (let i = 0; i < 7; i++) created.push((await create({ tenantId: pager })).endpoint!.id);
      const deleted = created.splice(3, 1)[0]!;
      await rpc("deleteEndpoint", { tenantId: pager, endpointId: deleted, idempotencyKey: key() });
      await create({ tenantId: other });
      const seen: string[] = [];
      let cursor = "";
      let pages = 0;
      do {
        const page = await rpc("listEndpoints", { tenantId: pager, limit: 2, cursor });
        seen.push(...page.endpoints.map((e) => e.id));
        expect(page.endpoints.every((e) => e.tenantId === pager)).toBe(true);
        cursor = page.nextCursor;
        pages++;
        await create({ tenantId: pager }); // newer: lands before the cursor, never on a later page
      } while (cursor !== "");
      expect(seen).toEqual([...created].reverse());
      expect(pages).toBe(3);
      const all = await rpc("listEndpoints", { tenantId: pager, limit: 0, cursor: "" });
      expect(all.endpoints).toHaveLength(6 + pages);
      expect(all.nextCursor).toBe("");
    });

    it("refuses a malformed cursor and a limit outside 1-100 with request.invalid", async () => {
      for (const request of [
        { tenantId: tenant, limit: 101, cursor: "" },
        { tenantId: tenant, limit: -1, cursor: "" },
        { tenantId: tenant, limit: 0, cursor: "not-a-cursor" },
      ]) {
        expect(await failure(rpc("listEndpoints", request))).toMatchObject({
          status: "INVALID_ARGUMENT",
          code: "request.invalid",
        });
      }
    });
  });

  describe("UpdateEndpoint", () => {
    it("changes the given fields, bumps the version, and refuses a stale expected_version", async () => {
      const { endpoint } = await create();
      const request = {
        tenantId: tenant,
        endpointId: endpoint!.id,
        description: "renamed",
        eventTypes: { eventTypes: ["usage.*"] },
        expectedVersion: "1",
        idempotencyKey: key("update"),
      };
      const updated = await rpc("updateEndpoint", request);
      expect(updated.replayed).toBe(false);
      expect(updated.endpoint).toMatchObject({
        url: endpoint!.url,
        description: "renamed",
        eventTypes: ["usage.*"],
        version: "2",
        createdAt: endpoint!.createdAt,
      });
      expect(await rpc("updateEndpoint", request)).toEqual({ ...updated, replayed: true });
      expect((await rpc("getEndpoint", { tenantId: tenant, endpointId: endpoint!.id })).endpoint!.version).toBe("2");

      const stale = await failure(rpc("updateEndpoint", { ...request, idempotencyKey: key("stale") }));
      expect(stale).toMatchObject({ status: "FAILED_PRECONDITION", code: "webhook.version_mismatch" });
      expect(stale.details).toMatch(/expectedVersion 1 .* version 2/);
      const url = await rpc("updateEndpoint", {
        tenantId: tenant,
        endpointId: endpoint!.id,
        url: "https://moved.example.test/hook",
        eventTypes: undefined,
        idempotencyKey: key("url"),
      });
      expect(url.endpoint).toMatchObject({
        url: "https://moved.example.test/hook",
        eventTypes: ["usage.*"],
        version: "3",
      });
    });

    it("rate_limit: set on create, changed, cleared with clear_rate_limit; out of range or both at once INVALID_ARGUMENT", async () => {
      const { endpoint } = await rpc("createEndpoint", createRequest({ rateLimit: 5 }));
      expect(endpoint!.rateLimit).toBe(5);
      const base = { tenantId: tenant, endpointId: endpoint!.id, eventTypes: undefined };
      const changed = await rpc("updateEndpoint", { ...base, rateLimit: 50, idempotencyKey: key() });
      expect(changed.endpoint).toMatchObject({ rateLimit: 50, version: "2" });
      const cleared = await rpc("updateEndpoint", { ...base, clearRateLimit: true, idempotencyKey: key() });
      expect(cleared.endpoint!.rateLimit).toBeUndefined();
      for (const rateLimit of [0, -3, 10_001]) {
        expect(await failure(rpc("createEndpoint", createRequest({ rateLimit })))).toMatchObject({
          status: "INVALID_ARGUMENT",
          code: "webhook.endpoint_invalid",
        });
        expect(await failure(rpc("updateEndpoint", { ...base, rateLimit, idempotencyKey: key() }))).toMatchObject({
          status: "INVALID_ARGUMENT",
          code: "webhook.endpoint_invalid",
        });
      }
      expect(
        await failure(rpc("updateEndpoint", { ...base, rateLimit: 5, clearRateLimit: true, idempotencyKey: key() })),
      ).toMatchObject({ status: "INVALID_ARGUMENT", code: "webhook.endpoint_invalid" });
      expect((await rpc("getEndpoint", { tenantId: tenant, endpointId: endpoint!.id })).endpoint).toMatchObject({
        version: "3",
      });
    });

    it("checks a new URL's target, validates input, and answers not found across tenants", async () => {
      const { endpoint } = await create();
      const base = { tenantId: tenant, endpointId: endpoint!.id, eventTypes: undefined, idempotencyKey: key() };
      expect(await failure(rpc("updateEndpoint", { ...base, url: "https://private.example.test/" }))).toMatchObject({
        status: "INVALID_ARGUMENT",
        code: "webhook.target_not_allowed",
      });
      expect(await failure(rpc("updateEndpoint", { ...base, url: "http://hooks.example.test/" }))).toMatchObject({
        code: "webhook.endpoint_invalid",
      });
      expect(await failure(rpc("updateEndpoint", base))).toMatchObject({ code: "webhook.endpoint_invalid" });
      expect(
        await failure(rpc("updateEndpoint", { ...base, eventTypes: { eventTypes: ["channel.disconnected"] } })),
      ).toMatchObject({ code: "webhook.event_type_not_subscribable" });
      expect(
        await failure(rpc("updateEndpoint", { ...base, tenantId: other, description: "x", idempotencyKey: key() })),
      ).toMatchObject({ status: "NOT_FOUND", code: "webhook.endpoint_not_found" });
      expect((await rpc("getEndpoint", { tenantId: tenant, endpointId: endpoint!.id })).endpoint).toEqual(endpoint);
    });
  });

  describe("PauseEndpoint and ResumeEndpoint", () => {
    it("pauses; resume clears the attention flag and releases every held delivery with a new generation", async () => {
      const { endpoint } = await create();
      const paused = await rpc("pauseEndpoint", { tenantId: tenant, endpointId: endpoint!.id, idempotencyKey: key() });
      expect(paused.endpoint).toMatchObject({ paused: true, version: "2" });
      await db("endpoints").update({ attention_reason: "webhook.endpoint_dead_lettered" }).where({ id: endpoint!.id });
      expect((await rpc("getEndpoint", { tenantId: tenant, endpointId: endpoint!.id })).endpoint!.attentionReason).toBe(
        "webhook.endpoint_dead_lettered",
      );
      const fresh = await seedDelivery({ endpoint: endpoint!, status: "held", generation: 1 });
      const retried = await seedDelivery({ endpoint: endpoint!, status: "held", attempts: 2, generation: 3 });
      const done = await seedDelivery({ endpoint: endpoint!, status: "succeeded", attempts: 1, generation: 1 });
      const before = jobs.length;
      const resumeKey = key("resume");
      const resumed = await rpc("resumeEndpoint", {
        tenantId: tenant,
        endpointId: endpoint!.id,
        expectedVersion: "2",
        idempotencyKey: resumeKey,
      });
      expect(resumed.endpoint).toMatchObject({ paused: false, version: "3" });
      expect(resumed.endpoint!.attentionReason).toBeUndefined();
      // The dead-letter attention closes: webhook.endpoint_resumed in the outbox, relay kicked.
      expect(
        (await outboxEvents()).filter(
          (e) =>
            e.type === "webhook.endpoint_resumed" &&
            (e.object as { endpoint_id?: string }).endpoint_id === endpoint!.id,
        ),
      ).toEqual([
        {
          subject: `wsvc.events.${tenant}.webhook.endpoint_resumed`,
          type: "webhook.endpoint_resumed",
          object: { endpoint_id: endpoint!.id },
        },
      ]);
      expect(relayKicks).toBeGreaterThan(0);
      const rows = await db("deliveries")
        .select("id", "status", "generation", "next_attempt_at")
        .whereIn("id", [fresh, retried, done]);
      const byId = Object.fromEntries(rows.map((row: { id: string }) => [row.id, row])) as unknown as Record<
        string,
        { status: string; generation: number; next_attempt_at: Date | null }
      >;
      expect(byId[fresh]).toMatchObject({ status: "pending", generation: 2 });
      expect(byId[retried]).toMatchObject({ status: "awaiting_retry", generation: 4 });
      expect(byId[done]).toMatchObject({ status: "succeeded", generation: 1, next_attempt_at: null });
      expect(byId[fresh]!.next_attempt_at).toBeInstanceOf(Date);
      expect(jobs.slice(before)).toEqual(
        expect.arrayContaining([
          { deliveryId: fresh, generation: 2 },
          { deliveryId: retried, generation: 4 },
        ]),
      );
      expect(jobs.length - before).toBe(2);
      // A replay answers the same and enqueues nothing more.
      const replay = await rpc("resumeEndpoint", {
        tenantId: tenant,
        endpointId: endpoint!.id,
        expectedVersion: "2",
        idempotencyKey: resumeKey,
      });
      expect(replay).toEqual({ ...resumed, replayed: true });
      expect(jobs.length - before).toBe(2);
      expect(
        await failure(
          rpc("pauseEndpoint", {
            tenantId: tenant,
            endpointId: endpoint!.id,
            expectedVersion: "2",
            idempotencyKey: key(),
          }),
        ),
      ).toMatchObject({ status: "FAILED_PRECONDITION", code: "webhook.version_mismatch" });
    });

    it("commits a resume even when the enqueue fails afterwards, and logs it", async () => {
      const { endpoint } = await create();
      await rpc("pauseEndpoint", { tenantId: tenant, endpointId: endpoint!.id, idempotencyKey: key() });
      const held = await seedDelivery({ endpoint: endpoint!, status: "held" });
      failEnqueue = true;
      try {
        const resumed = await rpc("resumeEndpoint", {
          tenantId: tenant,
          endpointId: endpoint!.id,
          idempotencyKey: key(),
        });
        expect(resumed.endpoint!.paused).toBe(false);
      } finally {
        failEnqueue = false;
      }
      expect((await db("deliveries").where({ id: held }).first()) as { status: string }).toMatchObject({
        status: "pending",
      });
      expect(logLines.some((line) => line.includes("enqueue after commit failed") && line.includes(held))).toBe(true);
    });
  });

  describe("RotateSecret", () => {
    it("answers a new secret once; the previous one stays sealed on the row for 24 hours", async () => {
      const { endpoint, secret: original } = await create();
      const request = { tenantId: tenant, endpointId: endpoint!.id, expectedVersion: "1", idempotencyKey: key() };
      const before = Date.now();
      const rotated = await rpc("rotateSecret", request);
      expect(rotated.replayed).toBe(false);
      expect(rotated.secret).toMatch(/^whsec_/);
      expect(rotated.secret).not.toBe(original);
      expect(rotated.endpoint!.version).toBe("2");
      const expires = Date.parse(rotated.endpoint!.previousSecretExpiresAt!);
      expect(expires).toBeGreaterThanOrEqual(before + 24 * 3_600_000 - 1);
      expect(expires).toBeLessThanOrEqual(Date.now() + 24 * 3_600_000);
      const row = (await db("endpoints").where({ id: endpoint!.id }).first()) as Record<string, string>;
      expect(openSecret(keyRing, row.secret_sealed!, endpoint!.id)).toBe(rotated.secret);
      expect(openSecret(keyRing, row.previous_secret_sealed!, endpoint!.id)).toBe(original);
      expect(JSON.stringify(row)).not.toContain(rotated.secret.slice(6));
      expect(JSON.stringify(await db("idempotency_keys").where({ key: request.idempotencyKey }))).not.toContain(
        rotated.secret.slice(6),
      );
      expect(await rpc("rotateSecret", request)).toEqual({ ...rotated, replayed: true });
      expect(await failure(rpc("rotateSecret", { ...request, idempotencyKey: key() }))).toMatchObject({
        code: "webhook.version_mismatch",
      });
      expect(logLines.join("\n")).not.toContain(rotated.secret.slice(6));
    });
  });

  describe("DeleteEndpoint", () => {
    it("deletes once: then not found, not listed, a replay answers replayed", async () => {
      const { endpoint } = await create();
      const request = { tenantId: tenant, endpointId: endpoint!.id, idempotencyKey: key("delete") };
      expect(
        await failure(rpc("deleteEndpoint", { ...request, tenantId: other, idempotencyKey: key() })),
      ).toMatchObject({ code: "webhook.endpoint_not_found" });
      expect(await rpc("deleteEndpoint", request)).toEqual({ replayed: false });
      expect(await rpc("deleteEndpoint", request)).toEqual({ replayed: true });
      expect(await failure(rpc("getEndpoint", { tenantId: tenant, endpointId: endpoint!.id }))).toMatchObject({
        code: "webhook.endpoint_not_found",
      });
      expect(await failure(rpc("deleteEndpoint", { ...request, idempotencyKey: key() }))).toMatchObject({
        status: "NOT_FOUND",
        code: "webhook.endpoint_not_found",
      });
    });
  });

  describe("every mutation, declared", () => {
    /** The lines logged with this message since `from`. */
    const logged = (message: string, from: number) =>
      logLines.slice(from).filter((line) => (JSON.parse(line) as { msg?: string }).msg === message);

    it("kicks the relay and logs once after a first commit, never on a replay", async () => {
      const { endpoint } = await create();
      const on = { tenantId: tenant, endpointId: endpoint!.id };
      const failed = await seedDelivery({ endpoint: endpoint!, status: "dead_lettered", attempts: 8 });
      const since = new Date(Date.now() - 3_600_000).toISOString();
      const calls: [keyof Methods, string, () => Promise<{ replayed: boolean }>][] = [];
      const step = <K extends keyof Methods>(method: K, message: string, request: RequestOf<K>) =>
        calls.push([method, message, () => rpc(method, request) as Promise<{ replayed: boolean }>]);
      step("createEndpoint", "endpoint created", createRequest());
      step("updateEndpoint", "endpoint updated", {
        ...on,
        description: "renamed",
        eventTypes: undefined,
        idempotencyKey: key(),
      });
      step("redriveDelivery", "delivery redriven", { ...on, deliveryId: failed, idempotencyKey: key() });
      step("sendTestDelivery", "test delivery created", {
        ...on,
        eventType: "booking.created",
        idempotencyKey: key(),
      });
      step("recoverDeliveries", "recovery created", { ...on, since, dryRun: false, idempotencyKey: key() });
      step("rotateSecret", "endpoint secret rotated", { ...on, idempotencyKey: key() });
      step("pauseEndpoint", "endpoint paused", { ...on, idempotencyKey: key() });
      step("resumeEndpoint", "endpoint resumed", { ...on, idempotencyKey: key() });
      step("deleteEndpoint", "endpoint deleted", { ...on, idempotencyKey: key() });
      for (const [method, message, call] of calls) {
        const kicks = relayKicks;
        const lines = logLines.length;
        expect((await call()).replayed, method).toBe(false);
        expect(relayKicks - kicks, method).toBe(1);
        expect(logged(message, lines), method).toHaveLength(1);
        expect((await call()).replayed, method).toBe(true);
        expect(relayKicks - kicks, method).toBe(1);
        expect(logged(message, lines), method).toHaveLength(1);
      }
    });

    it("a dry run of a recovery records no fact: no kick, no log line", async () => {
      const { endpoint } = await create();
      const kicks = relayKicks;
      const lines = logLines.length;
      const dry = {
        tenantId: tenant,
        endpointId: endpoint!.id,
        since: new Date(Date.now() - 3_600_000).toISOString(),
        dryRun: true,
        idempotencyKey: key("dry"),
      };
      expect(await rpc("recoverDeliveries", dry)).toEqual({ wouldRecover: "0", replayed: false });
      expect(await rpc("recoverDeliveries", dry)).toEqual({ wouldRecover: "0", replayed: true });
      expect(relayKicks).toBe(kicks);
      expect(logged("recovery created", lines)).toEqual([]);
    });

    it("refuses a bad actor, endpoint input, target or test event type before the key is claimed", async () => {
      const { endpoint } = await create();
      const on = { tenantId: tenant, endpointId: endpoint!.id };
      // Each refusal leaves its key unclaimed: the valid request under it then runs for the first time.
      const createKey = key("create");
      expect(
        await failure(
          rpc("createEndpoint", createRequest({ url: "https://private.example.test/", idempotencyKey: createKey })),
        ),
      ).toMatchObject({ status: "INVALID_ARGUMENT" });
      expect((await rpc("createEndpoint", createRequest({ idempotencyKey: createKey }))).replayed).toBe(false);
      const updateKey = key("update");
      expect(
        await failure(
          rpc("updateEndpoint", {
            ...on,
            url: "http://hooks.example.test/",
            eventTypes: undefined,
            idempotencyKey: updateKey,
          }),
        ),
      ).toMatchObject({ status: "INVALID_ARGUMENT" });
      expect(
        (
          await rpc("updateEndpoint", {
            ...on,
            url: "https://hooks.example.test/",
            eventTypes: undefined,
            idempotencyKey: updateKey,
          })
        ).replayed,
      ).toBe(false);
      const testKey = key("test");
      expect(
        await failure(rpc("sendTestDelivery", { ...on, eventType: "nope.x", idempotencyKey: testKey })),
      ).toMatchObject({ code: "webhook.event_type_unknown" });
      expect(
        (await rpc("sendTestDelivery", { ...on, eventType: "booking.created", idempotencyKey: testKey })).replayed,
      ).toBe(false);
      // The actor is not part of the fingerprint: the same request with a well-formed one runs.
      const pauseKey = key("pause");
      expect(
        await failure(rpc("pauseEndpoint", { ...on, actor: "no spaces", idempotencyKey: pauseKey })),
      ).toMatchObject({ status: "INVALID_ARGUMENT", code: "request.invalid" });
      expect((await rpc("pauseEndpoint", { ...on, actor: "console:ana", idempotencyKey: pauseKey })).replayed).toBe(
        false,
      );
      expect(await failure(rpc("pauseEndpoint", { ...on, tenantId: "", idempotencyKey: key() }))).toEqual({
        status: "INVALID_ARGUMENT",
        code: "request.invalid",
        details: "tenant_id is required",
      });
    });
  });

  it("lists the event catalog: 20 types (spec 6.3's 15, issue 22's two, issue 32's three), five coming soon and not subscribable", async () => {
    const { eventTypes, currentApiVersion } = await rpc("listEventTypes", {});
    expect(currentApiVersion).toBe("2026-07-01");
    expect(eventTypes).toHaveLength(20);
    expect(eventTypes.filter((t) => !t.subscribable).map((t) => t.type)).toEqual([
      "channel.disconnected",
      "channel.quality_changed",
      "task.completed",
      "invoice.issued",
      "usage.snapshot",
    ]);
    expect(eventTypes.filter((t) => !t.subscribable).every((t) => t.emission === "coming_soon")).toBe(true);
    expect(eventTypes.find((t) => t.type === "booking.created")).toMatchObject({
      emission: "emitted",
      subscribable: true,
    });
    // Each subscribable type carries its envelope's JSON Schema and an example; the others neither.
    for (const t of eventTypes) {
      if (!t.subscribable) {
        expect([t.schemaJson, t.exampleJson], t.type).toEqual(["", ""]);
        continue;
      }
      expect(JSON.parse(t.schemaJson), t.type).toMatchObject({
        $schema: "https://json-schema.org/draft/2020-12/schema",
        properties: { type: { const: t.type }, api_version: { const: currentApiVersion } },
      });
      expect(JSON.parse(t.exampleJson), t.type).toMatchObject({ type: t.type, api_version: currentApiVersion });
    }
  });

  describe("the delivery ledger", () => {
    it("pages deliveries newest first, each once, filtered by status, event type and event id", async () => {
      const { endpoint } = await create();
      const { endpoint: neighbour } = await create();
      const statuses = ["pending", "succeeded", "awaiting_retry", "dead_lettered", "held"];
      const ids: string[] = [];
      for (let i = 0; i < 12; i++) {
        ids.push(
          await seedDelivery({
            endpoint: endpoint!,
            status: statuses[i % 5],
            type: i % 3 === 0 ? "booking.cancelled" : "booking.created",
          }),
        );
      }
      await seedDelivery({ endpoint: neighbour! });
      const seen: string[] = [];
      let cursor = "";
      do {
        const page = await rpc("listDeliveries", {
          tenantId: tenant,
          endpointId: endpoint!.id,
          limit: 5,
          cursor,
          status: "",
          eventType: "",
          eventId: "",
          createdAfter: "",
          createdBefore: "",
        });
        seen.push(...page.deliveries.map((d) => d.id));
        cursor = page.nextCursor;
        await seedDelivery({ endpoint: endpoint! }); // newer ones never appear on later pages
      } while (cursor !== "");
      expect(seen).toEqual([...ids].reverse());

      const succeeded = await rpc("listDeliveries", {
        tenantId: tenant,
        endpointId: endpoint!.id,
        limit: 100,
        cursor: "",
        status: "succeeded",
        eventType: "",
        eventId: "",
        createdAfter: "",
        createdBefore: "",
      });
      expect(succeeded.deliveries.map((d) => d.id)).toEqual([ids[11], ids[6], ids[1]]);
      const cancelled = await rpc("listDeliveries", {
        tenantId: tenant,
        endpointId: endpoint!.id,
        limit: 100,
        cursor: "",
        status: "",
        eventType: "booking.cancelled",
        eventId: "",
        createdAfter: "",
        createdBefore: "",
      });
      expect(cancelled.deliveries.map((d) => d.id)).toEqual([ids[9], ids[6], ids[3], ids[0]]);
      const ofOneEvent = await rpc("listDeliveries", {
        tenantId: tenant,
        endpointId: endpoint!.id,
        limit: 100,
        cursor: "",
        status: "",
        eventType: "",
        eventId: cancelled.deliveries[1]!.eventId,
        createdAfter: "",
        createdBefore: "",
      });
      expect(ofOneEvent.deliveries.map((d) => d.id)).toEqual([ids[6]]);
      expect(cancelled.deliveries[0]).toMatchObject({
        endpointId: endpoint!.id,
        eventType: "booking.cancelled",
        status: "held",
        attempts: 0,
        attemptsTotal: 0,
        livemode: true,
      });
      const base = {
        tenantId: tenant,
        endpointId: endpoint!.id,
        limit: 0,
        cursor: "",
        eventType: "",
        eventId: "",
        createdAfter: "",
        createdBefore: "",
      };
      expect(await failure(rpc("listDeliveries", { ...base, status: "failed" }))).toMatchObject({
        status: "INVALID_ARGUMENT",
        code: "request.invalid",
      });
      expect(await failure(rpc("listDeliveries", { ...base, tenantId: other, status: "" }))).toMatchObject({
        status: "NOT_FOUND",
        code: "webhook.endpoint_not_found",
      });
    });

    it("without an endpoint lists the tenant's message log across its live endpoints, by date range", async () => {
      const mine = `ten_${randomBytes(4).toString("hex")}`;
      const { endpoint: first } = await create({ tenantId: mine });
      const { endpoint: second } = await create({ tenantId: mine });
      const { endpoint: gone } = await create({ tenantId: mine });
      const { endpoint: foreign } = await create({ tenantId: other });
      const old = await seedDelivery({ endpoint: first!, createdAgoMs: 3 * 3_600_000, type: "booking.cancelled" });
      const a = await seedDelivery({ endpoint: first!, createdAgoMs: 2 * 3_600_000, status: "succeeded" });
      const b = await seedDelivery({ endpoint: second!, createdAgoMs: 3_600_000, status: "dead_lettered" });
      const c = await seedDelivery({ endpoint: second!, status: "succeeded" });
      await seedDelivery({ endpoint: gone! });
      await seedDelivery({ endpoint: foreign! });
      await rpc("deleteEndpoint", { tenantId: mine, endpointId: gone!.id, idempotencyKey: key() });
      const log = {
        tenantId: mine,
        endpointId: "",
        limit: 2,
        cursor: "",
        status: "",
        eventType: "",
        eventId: "",
        createdAfter: "",
        createdBefore: "",
      };
      const firstPage = await rpc("listDeliveries", log);
      const secondPage = await rpc("listDeliveries", { ...log, cursor: firstPage.nextCursor });
      expect([...firstPage.deliveries, ...secondPage.deliveries].map((d) => d.id)).toEqual([c, b, a, old]);
      expect(secondPage.nextCursor).toBe("");
      const iso = (agoMs: number) => new Date(Date.now() - agoMs).toISOString();
      const window = { ...log, limit: 100, createdAfter: iso(2.5 * 3_600_000), createdBefore: iso(30 * 60_000) };
      expect((await rpc("listDeliveries", window)).deliveries.map((d) => d.id)).toEqual([b, a]);
      expect(
        (await rpc("listDeliveries", { ...window, status: "succeeded" })).deliveries.map((d) => [d.id, d.endpointId]),
      ).toEqual([[a, first!.id]]);
      expect(
        (await rpc("listDeliveries", { ...log, eventType: "booking.cancelled" })).deliveries.map((d) => d.id),
      ).toEqual([old]);
      const { delivery } = await rpc("getDelivery", { tenantId: mine, endpointId: second!.id, deliveryId: b });
      expect((await rpc("listDeliveries", { ...log, eventId: delivery!.eventId })).deliveries.map((d) => d.id)).toEqual(
        [b],
      );
      for (const bound of [{ createdAfter: "2026-11-27" }, { createdBefore: "yesterday" }]) {
        expect(await failure(rpc("listDeliveries", { ...log, ...bound }))).toMatchObject({
          status: "INVALID_ARGUMENT",
          code: "request.invalid",
        });
      }
      expect(
        await failure(rpc("listDeliveries", { ...log, createdAfter: iso(0), createdBefore: iso(60_000) })),
      ).toMatchObject({ status: "INVALID_ARGUMENT", code: "request.invalid" });
    });

    it("inspects a delivery: its attempts oldest first and the exact payload", async () => {
      const { endpoint } = await create();
      const id = await seedDelivery({ endpoint: endpoint!, status: "awaiting_retry", attempts: 2, attemptsTotal: 2 });
      await seedAttempt(id, endpoint!.id, {
        number: 2,
        agoMs: 1_000,
        durationMs: 40,
        succeeded: false,
        statusCode: 500,
      });
      await seedAttempt(id, endpoint!.id, {
        number: 1,
        agoMs: 60_000,
        durationMs: 30,
        succeeded: false,
        statusCode: 503,
      });
      const { delivery, attempts, payload } = await rpc("getDelivery", {
        tenantId: tenant,
        endpointId: endpoint!.id,
        deliveryId: id,
      });
      expect(delivery).toMatchObject({ id, status: "awaiting_retry", attempts: 2, attemptsTotal: 2 });
      expect(attempts.map((a) => [a.number, a.statusCode, a.durationMs, a.succeeded, a.error])).toEqual([
        [1, 503, 30, false, "non_2xx_status"],
        [2, 500, 40, false, "non_2xx_status"],
      ]);
      expect(Buffer.from(attempts[0]!.responseBody).toString("utf8")).toBe("nope \u00e9");
      const row = (await db("deliveries").where({ id }).first()) as { payload: string };
      expect(payload).toBe(row.payload);
      const { endpoint: neighbour } = await create();
      for (const request of [
        { tenantId: tenant, endpointId: neighbour!.id, deliveryId: id },
        { tenantId: tenant, endpointId: endpoint!.id, deliveryId: "dlv_000000000000000000000000" },
      ]) {
        expect(await failure(rpc("getDelivery", request))).toMatchObject({
          status: "NOT_FOUND",
          code: "webhook.delivery_not_found",
        });
      }
      expect(
        await failure(rpc("getDelivery", { tenantId: other, endpointId: endpoint!.id, deliveryId: id })),
      ).toMatchObject({ code: "webhook.endpoint_not_found" });
    });
  });

  describe("RedriveDelivery", () => {
    it("starts a fresh run of a dead-lettered delivery, keeps attempts_total, bumps the generation, enqueues once", async () => {
      const { endpoint } = await create();
      const id = await seedDelivery({
        endpoint: endpoint!,
        status: "dead_lettered",
        attempts: 8,
        attemptsTotal: 8,
        generation: 5,
        createdAgoMs: 29 * 86_400_000,
      });
      const before = jobs.length;
      const request = { tenantId: tenant, endpointId: endpoint!.id, deliveryId: id, idempotencyKey: key("redrive") };
      const redriven = await rpc("redriveDelivery", request);
      expect(redriven).toMatchObject({
        replayed: false,
        delivery: { id, status: "pending", attempts: 0, attemptsTotal: 8 },
      });
      expect(redriven.delivery!.nextAttemptAt).toBeDefined();
      expect((await db("deliveries").where({ id }).first()) as { generation: number }).toMatchObject({
        generation: 6,
      });
      expect(jobs.slice(before)).toEqual([{ deliveryId: id, generation: 6 }]);
      expect(await rpc("redriveDelivery", request)).toEqual({ ...redriven, replayed: true });
      expect(jobs.length).toBe(before + 1);
      // Now pending: not redrivable again.
      expect(await failure(rpc("redriveDelivery", { ...request, idempotencyKey: key() }))).toMatchObject({
        status: "FAILED_PRECONDITION",
        code: "webhook.delivery_not_redrivable",
      });
    });

    it("redrives an awaiting_retry delivery; a paused endpoint holds it without a job", async () => {
      const { endpoint } = await create();
      const id = await seedDelivery({ endpoint: endpoint!, status: "awaiting_retry", attempts: 3 });
      await rpc("pauseEndpoint", { tenantId: tenant, endpointId: endpoint!.id, idempotencyKey: key() });
      const before = jobs.length;
      const redriven = await rpc("redriveDelivery", {
        tenantId: tenant,
        endpointId: endpoint!.id,
        deliveryId: id,
        idempotencyKey: key(),
      });
      expect(redriven.delivery).toMatchObject({ status: "held", attempts: 0, attemptsTotal: 3 });
      expect(redriven.delivery!.nextAttemptAt).toBeUndefined();
      expect(jobs.length).toBe(before);
    });

    it("resends a succeeded delivery: a fresh run after the attempts made, enqueued", async () => {
      const { endpoint } = await create();
      const id = await seedDelivery({ endpoint: endpoint!, status: "succeeded", attempts: 2, generation: 2 });
      const before = jobs.length;
      const resent = await rpc("redriveDelivery", {
        tenantId: tenant,
        endpointId: endpoint!.id,
        deliveryId: id,
        idempotencyKey: key(),
      });
      expect(resent.delivery).toMatchObject({ id, status: "pending", attempts: 0, attemptsTotal: 2 });
      expect(jobs.slice(before)).toEqual([{ deliveryId: id, generation: 3 }]);
    });

    it("refuses pending and held deliveries, and those past the 30-day window", async () => {
      const { endpoint } = await create();
      const redriveOf = (deliveryId: string) =>
        rpc("redriveDelivery", { tenantId: tenant, endpointId: endpoint!.id, deliveryId, idempotencyKey: key() });
      for (const status of ["pending", "held"]) {
        expect(await failure(redriveOf(await seedDelivery({ endpoint: endpoint!, status })))).toMatchObject({
          status: "FAILED_PRECONDITION",
          code: "webhook.delivery_not_redrivable",
        });
      }
      const old = await seedDelivery({ endpoint: endpoint!, status: "dead_lettered", createdAgoMs: 31 * 86_400_000 });
      expect(await failure(redriveOf(old))).toMatchObject({
        status: "FAILED_PRECONDITION",
        code: "webhook.redrive_window_closed",
      });
      expect(await failure(redriveOf("dlv_000000000000000000000000"))).toMatchObject({
        status: "NOT_FOUND",
        code: "webhook.delivery_not_found",
      });
    });
  });

  describe("GetEndpointStats", () => {
    it("counts the last 24 hours: deliveries by status, attempts, success rate and latency percentiles", async () => {
      const { endpoint } = await create();
      const a = await seedDelivery({ endpoint: endpoint!, status: "succeeded", attempts: 1 });
      const b = await seedDelivery({ endpoint: endpoint!, status: "succeeded", attempts: 2 });
      const c = await seedDelivery({ endpoint: endpoint!, status: "dead_lettered", attempts: 8 });
      await seedDelivery({ endpoint: endpoint!, status: "held" });
      const old = await seedDelivery({ endpoint: endpoint!, status: "succeeded", createdAgoMs: 25 * 3_600_000 });
      await seedAttempt(a, endpoint!.id, { number: 1, agoMs: 60_000, durationMs: 100, succeeded: true });
      await seedAttempt(b, endpoint!.id, { number: 1, agoMs: 50_000, durationMs: 400, succeeded: false });
      await seedAttempt(b, endpoint!.id, { number: 2, agoMs: 40_000, durationMs: 200, succeeded: true });
      await seedAttempt(c, endpoint!.id, { number: 1, agoMs: 30_000, durationMs: 300, succeeded: true });
      await seedAttempt(old, endpoint!.id, { number: 1, agoMs: 25 * 3_600_000, durationMs: 9_000, succeeded: true });
      const stats = await rpc("getEndpointStats", { tenantId: tenant, endpointId: endpoint!.id });
      expect(stats).toMatchObject({
        endpointId: endpoint!.id,
        pending: "0",
        succeeded: "2",
        awaitingRetry: "0",
        deadLettered: "1",
        held: "1",
        attempts: "4",
        attemptsSucceeded: "3",
        successRate: 0.75,
        latencyP50Ms: 250,
      });
      expect(stats.latencyP95Ms).toBeCloseTo(385, 6);
      expect(stats.latencyP99Ms).toBeCloseTo(397, 6);
      expect(Date.parse(stats.windowEnd) - Date.parse(stats.windowStart)).toBe(24 * 3_600_000);

      const { endpoint: quiet } = await create();
      const none = await rpc("getEndpointStats", { tenantId: tenant, endpointId: quiet!.id });
      expect(none).toMatchObject({ attempts: "0", attemptsSucceeded: "0", pending: "0" });
      expect(none.successRate).toBeUndefined();
      expect(none.latencyP50Ms).toBeUndefined();
      expect(await failure(rpc("getEndpointStats", { tenantId: other, endpointId: quiet!.id }))).toMatchObject({
        code: "webhook.endpoint_not_found",
      });
    });
  });

  describe("SendTestDelivery", () => {
    it("writes a livemode=false event and a pending delivery of its envelope, and enqueues generation 1", async () => {
      const { endpoint } = await create();
      const before = jobs.length;
      const request = {
        tenantId: tenant,
        endpointId: endpoint!.id,
        eventType: "booking.created",
        idempotencyKey: key("test"),
      };
      const sent = await rpc("sendTestDelivery", request);
      expect(sent.replayed).toBe(false);
      expect(sent.delivery).toMatchObject({
        id: expect.stringMatching(/^dlv_[0-9a-f]{24}$/) as string,
        endpointId: endpoint!.id,
        eventId: expect.stringMatching(/^evt_[0-9a-f]{24}$/) as string,
        eventType: "booking.created",
        status: "pending",
        attempts: 0,
        attemptsTotal: 0,
        livemode: false,
      });
      expect(jobs.slice(before)).toEqual([{ deliveryId: sent.delivery!.id, generation: 1 }]);
      const event = (await db("events").where({ id: sent.delivery!.eventId }).first()) as Record<string, unknown>;
      expect(event).toMatchObject({ tenant_id: tenant, type: "booking.created", livemode: false });
      const { payload } = await rpc("getDelivery", {
        tenantId: tenant,
        endpointId: endpoint!.id,
        deliveryId: sent.delivery!.id,
      });
      const envelope = JSON.parse(payload) as Record<string, unknown> & { data: { object: Record<string, unknown> } };
      expect(Object.keys(envelope)).toEqual(["id", "type", "api_version", "occurred_at", "tenant", "livemode", "data"]);
      expect(envelope).toMatchObject({
        id: sent.delivery!.eventId,
        type: "booking.created",
        api_version: "2026-07-01",
        tenant,
        livemode: false,
      });
      expect(envelope.data.object).toMatchObject({ status: "confirmed" });
      for (const k of Object.keys(envelope.data.object)) expect(k).toMatch(/^[a-z][a-z0-9]*(_[a-z0-9]+)*$/);
      expect(await rpc("sendTestDelivery", request)).toEqual({ ...sent, replayed: true });
      expect(jobs.length).toBe(before + 1);
    });

    it("holds a test delivery for a paused endpoint and refuses unknown and coming-soon types", async () => {
      const { endpoint } = await create();
      await rpc("pauseEndpoint", { tenantId: tenant, endpointId: endpoint!.id, idempotencyKey: key() });
      const before = jobs.length;
      const base = { tenantId: tenant, endpointId: endpoint!.id, idempotencyKey: key() };
      const held = await rpc("sendTestDelivery", { ...base, eventType: "tenant.activated" });
      expect(held.delivery).toMatchObject({ status: "held", livemode: false });
      expect(jobs.length).toBe(before);
      expect(
        await failure(rpc("sendTestDelivery", { ...base, idempotencyKey: key(), eventType: "nope.x" })),
      ).toMatchObject({ status: "INVALID_ARGUMENT", code: "webhook.event_type_unknown" });
      expect(
        await failure(rpc("sendTestDelivery", { ...base, idempotencyKey: key(), eventType: "task.completed" })),
      ).toMatchObject({ status: "INVALID_ARGUMENT", code: "webhook.event_type_not_subscribable" });
      expect(
        await failure(
          rpc("sendTestDelivery", { ...base, tenantId: other, idempotencyKey: key(), eventType: "tenant.activated" }),
        ),
      ).toMatchObject({ status: "NOT_FOUND", code: "webhook.endpoint_not_found" });
    });
  });
});

import { status as Status, type Metadata } from "@grpc/grpc-js";
import { deleteNamespaceStreams, newNatsNamespace, testNatsUrl } from "@platform/local-stack/nats-namespace";
import { createScratchDatabase, type ScratchDatabase } from "@platform/local-stack/postgres-databases";
import { BusEvent } from "@platform/proto/webhooks/v1";
import { declareEventsStream, eventsStreamName } from "@platform/service-kit/event-bus";
import { createClient, type ServiceClient } from "@platform/service-kit/grpc-client";
import {
  createGrpcInstrumentation,
  instrumentService,
  startGrpcServer,
  type RunningGrpcServer,
} from "@platform/service-kit/grpc-server";
import { createLogger } from "@platform/service-kit/logger";
import { createMetricsRegistry } from "@platform/service-kit/metrics";
import { TenantServiceService } from "@platform/proto/notify/v1";
import { ActivationServiceService } from "@platform/proto/notify/v1/activation";
import { startOutboxRelay, type OutboxRelay } from "@platform/service-kit/outbox";
import { createDatabase, migrateToLatest, type Knex } from "@platform/service-kit/postgres";
import { connect, type JetStreamManager, type NatsConnection } from "nats";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { migrations } from "../migrations/index.js";
import { NOTIFY_SCHEMA } from "../src/config.js";
import { createActivationRepository } from "../src/db/activation-repository.js";
import { createTenantRepository } from "../src/db/tenant-repository.js";
import { createEventOutbox } from "../src/db/event-outbox.js";
import { createActivationService } from "../src/grpc/activation-service.js";
import { createTenantService } from "../src/grpc/tenant-service.js";

async function eventually<T>(what: string, probe: () => Promise<T | undefined | false>, timeoutMs = 20_000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined && value !== false) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** gRPC status name and error-code metadata of a refused call. */
async function refusal(call: Promise<unknown>): Promise<{ status: string; code: unknown }> {
  try {
    await call;
  } catch (error) {
    const e = error as { code: number; metadata: Metadata };
    return { status: String(Status[e.code]), code: e.metadata.get("error-code")[0] };
  }
  throw new Error("the call succeeded");
}

describe("ActivationService over gRPC (in-process server, real Postgres and NATS)", () => {
  let scratch: ScratchDatabase;
  let db: Knex;
  let nc: NatsConnection;
  let jsm: JetStreamManager;
  let relay: OutboxRelay;
  const ns = newNatsNamespace();
  let server: RunningGrpcServer;
  /** The services as a gRPC client sees them. */
  let service: ServiceClient<typeof ActivationServiceService>;
  let tenantService: ServiceClient<typeof TenantServiceService>;
  const options = { requestId: "req-activation", timeoutMs: 10_000 };
  const context = () => options;
  const idempotency = { ttlMs: 60_000, leaseMs: 30_000 };

  beforeAll(async () => {
    scratch = await createScratchDatabase("activation");
    db = createDatabase({ url: scratch.url, schema: NOTIFY_SCHEMA, poolMax: 8 });
    await migrateToLatest(db, NOTIFY_SCHEMA, migrations);
    nc = await connect({ servers: testNatsUrl() });
    jsm = await nc.jetstreamManager();
    await declareEventsStream(jsm, ns, { replicas: 1 });
    relay = startOutboxRelay({
      db,
      js: nc.jetstream(),
      logger: createLogger("relay", "silent"),
      pollIntervalMs: 100,
      republishAfterMs: 600_000,
    });
    const events = createEventOutbox({ namespace: ns, kick: () => relay.kick() });
    const logger = createLogger("notify", "silent");
    const instrumentation = createGrpcInstrumentation(logger, createMetricsRegistry("notify"));
    server = await startGrpcServer({
      host: "127.0.0.1",
      port: 0,
      instrumentation,
      services: [
        {
          definition: ActivationServiceService,
          implementation: instrumentService(
            ActivationServiceService,
            createActivationService({
              db,
              activation: createActivationRepository(db),
              events,
              idempotency,
              requiredCapabilities: ["messaging_channel"],
            }),
            instrumentation,
          ),
        },
        {
          definition: TenantServiceService,
          implementation: instrumentService(
            TenantServiceService,
            createTenantService({ db, tenants: createTenantRepository(db), events, idempotency }),
            instrumentation,
          ),
        },
      ],
    });
    service = createClient(ActivationServiceService, `127.0.0.1:${server.port}`, { timeoutMs: 10_000 });
    tenantService = createClient(TenantServiceService, `127.0.0.1:${server.port}`, { timeoutMs: 10_000 });
  });
  afterAll(async () => {
    service?.close();
    tenantService?.close();
    await server?.shutdown(1_000);
    await relay?.stop();
    await nc?.close();
    await deleteNamespaceStreams(ns);
    await db?.destroy();
    await scratch?.drop();
  });

  const create = (id: string) => tenantService.createTenant({ id, name: id, plan: 0 }, context());
  const report = (tenantId: string, capability: string, passed: boolean, reasonCode = "") =>
    service.reportCapabilityCheck({ tenantId, capability, passed, reasonCode }, context());
  const start = (tenantId: string, idempotencyKey: string) =>
    service.startActivation({ tenantId, idempotencyKey }, context());

  /** The tenant's outbox events, oldest first, as [type, data.object]. */
  async function outboxOf(tenantId: string): Promise<[string, Record<string, unknown>][]> {
    const rows = await db("outbox").select<{ payload: Buffer }[]>("payload").orderBy("seq");
    return rows
      .map((row) => BusEvent.decode(row.payload))
      .filter((event) => event.tenantId === tenantId)
      .map((event) => [event.type, JSON.parse(event.dataJson) as Record<string, unknown>]);
  }
  const typesOf = async (tenantId: string) => (await outboxOf(tenantId)).map(([type]) => type);

  /** How many messages the EVENTS stream holds on the tenant's subjects, once the relay caught up. */
  async function streamCount(tenantId: string): Promise<number> {
    await eventually("the relay to publish every row", async () => {
      const waiting = await db("outbox").count<{ count: string }[]>("* as count").whereNull("published_at");
      return Number(waiting[0]!.count) === 0;
    });
    const info = await jsm.streams.info(eventsStreamName(ns), { subjects_filter: `${ns}events.${tenantId}.>` });
    return Object.values(info.state.subjects ?? {}).reduce((sum, n) => sum + n, 0);
  }

  it("walks provisioning -> validation -> stalled -> live, each transition's event written once", async () => {
    await create("walk");
    const answer = await start("walk", "k1");
    expect(answer.manifest).toMatchObject({ state: "validation", requiredCapabilities: ["messaging_channel"] });
    expect(answer.manifest!.blockingReasons).toEqual([
      expect.objectContaining({ code: "activation.capability_unchecked", capability: "messaging_channel" }),
    ]);
    expect(await typesOf("walk")).toEqual([]);

    const failed = await report("walk", "messaging_channel", false, "capability.credentials_revoked");
    expect(failed.emittedEventTypes).toEqual(["tenant.validation_failed"]);
    expect(failed.manifest).toMatchObject({ state: "stalled" });
    expect(failed.manifest!.blockingReasons).toEqual([
      expect.objectContaining({ code: "capability.credentials_revoked", capability: "messaging_channel" }),
    ]);
    expect((await tenantService.getTenant({ tenantId: "walk" }, context())).tenant).toMatchObject({
      lastErrorCode: "capability.credentials_revoked",
      activationState: "stalled",
      channelReady: false,
    });

    const passed = await report("walk", "messaging_channel", true);
    expect(passed.emittedEventTypes).toEqual(["capability.restored", "tenant.activated"]);
    expect((await tenantService.getTenant({ tenantId: "walk" }, context())).tenant).toMatchObject({
      activationState: "live",
      activated: true,
      status: "active",
      channelReady: true,
    });
    expect((await tenantService.getTenant({ tenantId: "walk" }, context())).tenant!.lastErrorCode).toBeUndefined();

    const suspended = await report("walk", "messaging_channel", false, "capability.permission_missing");
    expect(suspended.emittedEventTypes).toEqual(["capability.suspended"]);
    expect(suspended.manifest!.state).toBe("live");

    const outbox = await outboxOf("walk");
    expect(outbox.map(([type]) => type)).toEqual([
      "tenant.validation_failed",
      "capability.restored",
      "tenant.activated",
      "capability.suspended",
    ]);
    expect(outbox[0]![1]).toEqual({
      tenant_id: "walk",
      state: "stalled",
      failing_step: "validation",
      blocking_reasons: [{ code: "capability.credentials_revoked", capability: "messaging_channel" }],
    });
    expect(outbox[3]![1]).toMatchObject({
      capability: "messaging_channel",
      state: "off",
      reason_code: "capability.permission_missing",
    });
    expect(await streamCount("walk")).toBe(4);

    const { capabilities } = await service.getCapabilities({ tenantId: "walk" }, context());
    expect(capabilities).toEqual([
      expect.objectContaining({
        name: "messaging_channel",
        state: "off",
        required: true,
        lastResult: "fail",
        reasonCode: "capability.permission_missing",
      }),
    ]);
  });

  it("a repeated identical report emits nothing and does not bump the version", async () => {
    await create("repeat");
    await start("repeat", "k1");
    await report("repeat", "messaging_channel", true);
    const version = (await service.getActivation({ tenantId: "repeat" }, context())).manifest!.version;
    for (let i = 0; i < 3; i++) {
      expect((await report("repeat", "messaging_channel", true)).emittedEventTypes).toEqual([]);
    }
    expect((await service.getActivation({ tenantId: "repeat" }, context())).manifest!.version).toBe(version);
    expect(await typesOf("repeat")).toEqual(["tenant.activated"]);
    expect(await streamCount("repeat")).toBe(1);
  });

  it("concurrent reports and activations do not double-emit", async () => {
    await create("race");
    await start("race", "k0");
    await Promise.all(Array.from({ length: 8 }, () => report("race", "messaging_channel", true)));
    await Promise.all(Array.from({ length: 4 }, (_, i) => start("race", `k-${i}`)));
    await Promise.all(
      Array.from({ length: 8 }, () => report("race", "messaging_channel", false, "capability.unreachable")),
    );
    await Promise.all(Array.from({ length: 8 }, () => report("race", "messaging_channel", true)));
    expect(await typesOf("race")).toEqual(["tenant.activated", "capability.suspended", "capability.restored"]);
    expect(await streamCount("race")).toBe(3);
  });

  it("StartActivation replays the first answer for the same key; another key is a new execution", async () => {
    await create("replay");
    await report("replay", "messaging_channel", true);
    const first = await start("replay", "key-1");
    expect(first.replayed).toBe(false);
    expect(first.manifest!.state).toBe("live");
    const again = await start("replay", "key-1");
    expect(again).toEqual({ ...first, replayed: true });
    const other = await start("replay", "key-2");
    expect(other.replayed).toBe(false);
    expect(await typesOf("replay")).toEqual(["tenant.activated"]);
  });

  it("the operator's ActivateTenant makes the tenant live and emits tenant.activated once", async () => {
    await create("override");
    await report("override", "messaging_channel", false, "capability.unreachable");
    await tenantService.activateTenant({ tenantId: "override" }, context());
    await tenantService.activateTenant({ tenantId: "override" }, context());
    expect((await service.getActivation({ tenantId: "override" }, context())).manifest!.state).toBe("live");
    expect(await typesOf("override")).toEqual(["tenant.activated"]);
  });

  it("rejects bad reports with capability.report_invalid and unknown tenants with tenant.not_found", async () => {
    await create("bad");
    const invalid = { status: "INVALID_ARGUMENT", code: "capability.report_invalid" };
    expect(await refusal(report("bad", "messaging_channel", false))).toEqual(invalid);
    expect(await refusal(report("bad", "messaging_channel", false, "capability.bogus"))).toEqual(invalid);
    expect(await refusal(report("bad", "Bad Name", true))).toEqual(invalid);
    const notFound = { status: "NOT_FOUND", code: "tenant.not_found" };
    expect(await refusal(report("nobody", "messaging_channel", true))).toEqual(notFound);
    expect(await refusal(service.getActivation({ tenantId: "nobody" }, context()))).toEqual(notFound);
    expect(await typesOf("bad")).toEqual([]);
  });
});

/**
 * Pacing (issue 32 item 6, docs/notifications.md "Pacing"): two notify NotificationService gRPC
 * servers, each with its own pools, over ONE scratch database, sending through the Cloud API
 * stand-in. The limiter is exact across them because it is one row per number in that database.
 *
 * No timing is asserted: the pace in these tests is one send per 100 s, so however slowly the
 * machine runs them, a slot never frees up during a test; passing time is simulated by moving the
 * number's row back (what waiting Retry-After does), and the waits are checked against the row.
 */
import { credentials, type ServiceError } from "@grpc/grpc-js";
import { startCloudApiStub, type CloudApiStub } from "@platform/local-stack/cloud-api-stub";
import { createScratchDatabase, type ScratchDatabase } from "@platform/local-stack/postgres-databases";
import {
  NotificationServiceClient,
  NotificationServiceService,
  type SendNotificationRequest,
  type SendNotificationResponse,
} from "@platform/proto/notify/v1";
import {
  createGrpcInstrumentation,
  instrumentService,
  startGrpcServer,
  type RunningGrpcServer,
} from "@platform/service-kit/grpc-server";
import { createLogger } from "@platform/service-kit/logger";
import { createDatabase, migrateToLatest, type Knex } from "@platform/service-kit/postgres";
import pg from "pg";
import { Registry } from "prom-client";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { migrations } from "../migrations/index.js";
import { createWhatsAppChannel } from "../src/channel/whatsapp-channel.js";
import { defaultWhatsAppTemplates, NOTIFY_SCHEMA } from "../src/config.js";
import { createEventOutbox } from "../src/db/event-outbox.js";
import { createNotificationStore } from "../src/db/notification-store.js";
import { createTenantRepository } from "../src/db/tenant-repository.js";
import type { Pace } from "../src/domain/pacing.js";
import { activate } from "../src/domain/tenant.js";
import { createNotificationMetrics } from "../src/grpc/notification-metrics.js";
import { createNotificationService } from "../src/grpc/notification-service.js";

/** One send per 100 s, a burst of BURST: during a test only the burst is ever admitted. */
const PER_SECOND = 0.01;
const INTERVAL = 1 / PER_SECOND;
const BURST = 4;
const TOLERANCE = (BURST - 1) * INTERVAL;
/** Each tenant its own number (item 1 will read it from the tenant's channel). */
const numberOf: Record<string, string> = { acme: "whatsapp:1065", beta: "whatsapp:2077" };
const paceOf = (tenantId: string): Pace => ({ key: numberOf[tenantId]!, perSecond: PER_SECOND, burst: BURST });

type Answer = { ok: true; response: SendNotificationResponse } | { ok: false; error: ServiceError };

describe("pacing per number across two notify servers on one database (real Postgres)", () => {
  let scratch: ScratchDatabase;
  let db: Knex;
  let stub: CloudApiStub;
  const pools: pg.Pool[] = [];
  const servers: RunningGrpcServer[] = [];
  const clients: NotificationServiceClient[] = [];
  let serial = 0;

  beforeAll(async () => {
    scratch = await createScratchDatabase("pacing");
    db = createDatabase({ url: scratch.url, schema: NOTIFY_SCHEMA, poolMax: 4 });
    await migrateToLatest(db, NOTIFY_SCHEMA, migrations);
    const tenants = createTenantRepository(db);
    await db.transaction(async (trx) => {
      for (const id of ["acme", "beta"]) {
        await tenants.create(trx, { id, name: id, plan: "testing" });
        await tenants.update(trx, id, activate);
      }
    });
    stub = await startCloudApiStub();
    const logger = createLogger("notify", "silent");
    for (let replica = 0; replica < 2; replica++) {
      // Each server its own pools, as two notify processes would have.
      const pool = new pg.Pool({ connectionString: scratch.url, max: 8, options: `-c search_path=${NOTIFY_SCHEMA}` });
      pools.push(pool);
      const knex = createDatabase({ url: scratch.url, schema: NOTIFY_SCHEMA, poolMax: 2 });
      const instrumentation = createGrpcInstrumentation(logger, new Registry());
      const server = await startGrpcServer({
        host: "127.0.0.1",
        port: 0,
        instrumentation,
        services: [
          {
            definition: NotificationServiceService,
            implementation: instrumentService(
              NotificationServiceService,
              createNotificationService({
                store: createNotificationStore(knex, pool, createEventOutbox({ namespace: "pacing" })),
                provider: createWhatsAppChannel({
                  baseUrl: stub.url,
                  phoneNumberId: "1065",
                  accessToken: "EAAG-pacing",
                  templates: defaultWhatsAppTemplates,
                  timeoutMs: 3_000,
                }),
                metrics: createNotificationMetrics(new Registry()),
                leaseMs: 30_000,
                ttlMs: 3_600_000,
                testingAllowance: 1000,
                pace: paceOf,
              }),
              instrumentation,
            ),
          },
        ],
      });
      servers.push(server);
      const client = new NotificationServiceClient(`127.0.0.1:${server.port}`, credentials.createInsecure());
      clients.push(client);
      // The server's knex pool closes with the test database; keep a handle for afterAll.
      pools.push({ end: () => knex.destroy() } as unknown as pg.Pool);
    }
  });
  afterAll(async () => {
    for (const client of clients) client.close();
    await Promise.all(servers.map((server) => server.shutdown(1_000)));
    await Promise.all(pools.map((pool) => pool.end()));
    await stub?.close();
    await db?.destroy();
    await scratch?.drop();
  });
  beforeEach(async () => {
    // Every test starts with idle numbers and an empty stand-in.
    await db("channel_pace").delete();
    stub.requests.length = 0;
  });

  const request = (tenantId: string, idempotencyKey: string): SendNotificationRequest => ({
    tenantId,
    idempotencyKey,
    to: `+44770090${String(1000 + (serial++ % 9000))}`,
    type: "reminder",
    clientName: "Ana",
    businessName: "Paws",
    serviceName: "grooming",
    when: "2026-12-01T10:00:00Z",
    actor: { actorReference: "crm", delegationReference: undefined },
    otherFields: [],
  });

  const send = (replica: number, req: SendNotificationRequest) =>
    new Promise<Answer>((resolve) =>
      clients[replica]!.sendNotification(req, (error, response) =>
        resolve(error ? { ok: false, error } : { ok: true, response: response }),
      ),
    );

  const retryAfterOf = (answer: Answer) => (answer.ok ? undefined : answer.error.metadata.get("retry-after")[0]);
  const codeOf = (answer: Answer) => (answer.ok ? "ok" : String(answer.error.metadata.get("error-code")[0]));
  const dbNow = async () => (await db.raw<{ rows: { now: Date }[] }>("select clock_timestamp() as now")).rows[0]!.now;
  const tatOf = async (key: string) =>
    (await db("channel_pace").first<{ tat: Date }>("tat").where({ pace_key: key })).tat;

  /** What a tenant's sends left behind: keys, counted sends, commands, transcript entries, events. */
  async function traces(tenantId: string) {
    const count = async (query: Knex.QueryBuilder) => {
      const [row] = await query.count<{ n: string }[]>({ n: "*" });
      return Number(row!.n);
    };
    return {
      keys: await count(db("idempotency_keys").where({ scope: tenantId })),
      counted: Number(
        (await db("monthly_sends").first<{ sends: number } | undefined>("sends").where({ tenant_id: tenantId }))
          ?.sends ?? 0,
      ),
      commands: await count(db("notification_commands").where({ tenant_id: tenantId })),
      transcript: await count(db("conversation_messages").where({ tenant_id: tenantId })),
      events: await count(db("outbox").where("subject", "like", `%events.${tenantId}.%`)),
    };
  }

  it("admits exactly the burst of BURST + 3 sends issued at once through two servers; the rest are 429 with the limiter's Retry-After", async () => {
    const before = await traces("acme");
    const startedAt = await dbNow();
    const keys = Array.from({ length: BURST + 3 }, (_, i) => `burst-${i}`);
    const answers = await Promise.all(keys.map((key, i) => send(i % 2, request("acme", key))));
    const endedAt = await dbNow();

    const accepted = answers.filter((a) => a.ok);
    const refused = answers.filter((a) => !a.ok);
    expect(accepted).toHaveLength(BURST);
    expect(refused).toHaveLength(3);
    expect(accepted.map((a) => a.ok && a.response.state)).toEqual(Array.from({ length: BURST }, () => "sent"));
    // RESOURCE_EXHAUSTED (the gateway's 429) with the catalogue code shared with the provider's 130429.
    expect(refused.map((a) => [!a.ok && a.error.code, codeOf(a)])).toEqual(
      Array.from({ length: 3 }, () => [8, "partner.channel_rate_limited"]),
    );

    // Each refusal waited tat − τ − now at its own instant, between startedAt and endedAt (the
    // database's clock); its Retry-After is the ceiling of that, at least 1.
    const tat = (await tatOf("whatsapp:1065")).getTime() / 1000;
    const earliest = Math.max(1, Math.ceil(tat - TOLERANCE - endedAt.getTime() / 1000));
    const latest = Math.max(1, Math.ceil(tat - TOLERANCE - startedAt.getTime() / 1000));
    // BURST slots taken from an idle number: tat is the first admission's instant + BURST intervals.
    expect(tat - BURST * INTERVAL).toBeGreaterThanOrEqual(startedAt.getTime() / 1000 - 0.001);
    expect(tat - BURST * INTERVAL).toBeLessThanOrEqual(endedAt.getTime() / 1000 + 0.001);
    for (const answer of refused) {
      const retryAfter = Number(retryAfterOf(answer));
      expect(Number.isInteger(retryAfter) && retryAfter >= 1).toBe(true);
      expect(retryAfter).toBeGreaterThanOrEqual(earliest);
      expect(retryAfter).toBeLessThanOrEqual(latest);
    }

    // Only the admitted sends left anything: the provider was called BURST times.
    const after = await traces("acme");
    expect({
      keys: after.keys - before.keys,
      counted: after.counted - before.counted,
      commands: after.commands - before.commands,
      transcript: after.transcript - before.transcript,
      events: after.events - before.events,
      providerCalls: stub.requests.length,
    }).toEqual({
      keys: BURST,
      counted: BURST,
      commands: BURST,
      transcript: BURST,
      events: BURST,
      providerCalls: BURST,
    });
  });

  it("leaves no trace of a refused send, and the same key sends exactly once after Retry-After", async () => {
    // Fill acme's number.
    const fill = await Promise.all(Array.from({ length: BURST }, (_, i) => send(i % 2, request("acme", `fill-${i}`))));
    expect(fill.every((a) => a.ok)).toBe(true);
    const before = await traces("acme");
    const calls = stub.requests.length;

    const refusedRequest = request("acme", "refused-then-sent");
    const refused = await send(0, refusedRequest);
    expect(codeOf(refused)).toBe("partner.channel_rate_limited");
    const retryAfter = Number(retryAfterOf(refused));
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(await traces("acme")).toEqual(before);
    expect(await db("idempotency_keys").where({ scope: "acme", key: "refused-then-sent" })).toEqual([]);
    expect(stub.requests.length).toBe(calls);

    // Waiting Retry-After, simulated: the number's row moves back by that much.
    await db("channel_pace")
      .where({ pace_key: "whatsapp:1065" })
      .update({ tat: db.raw("tat - make_interval(secs => ?)", [retryAfter]) });
    const retried = await Promise.all([send(1, refusedRequest), send(0, refusedRequest)]);
    const afterRetry = await Promise.all([send(1, refusedRequest)]);
    const all = [...retried, ...afterRetry];
    // Exactly one fresh send; the others replay it (or, racing it, were told it is in progress).
    const fresh = all.filter((a) => a.ok && !a.response.replayed);
    expect(fresh).toHaveLength(1);
    expect(afterRetry[0].ok && afterRetry[0].response.replayed).toBe(true);
    const id = fresh[0]!.ok ? fresh[0]!.response.notificationId : "";
    for (const answer of all) if (answer.ok) expect(answer.response.notificationId).toBe(id);
    expect(stub.requests.length).toBe(calls + 1);
    const after = await traces("acme");
    expect(after.commands - before.commands).toBe(1);
    expect(after.transcript - before.transcript).toBe(1);
    expect(after.counted - before.counted).toBe(1);
  });

  it("keeps two numbers independent: another tenant's number still admits its whole burst", async () => {
    const acme = await Promise.all(
      Array.from({ length: BURST + 2 }, (_, i) => send(i % 2, request("acme", `indep-a-${i}`))),
    );
    expect(acme.filter((a) => a.ok)).toHaveLength(BURST);
    const beta = await Promise.all(
      Array.from({ length: BURST + 2 }, (_, i) => send(i % 2, request("beta", `indep-b-${i}`))),
    );
    expect(beta.filter((a) => a.ok)).toHaveLength(BURST);
    expect(beta.filter((a) => !a.ok).map(codeOf)).toEqual([
      "partner.channel_rate_limited",
      "partner.channel_rate_limited",
    ]);
    const rows = await db("channel_pace").select<{ pace_key: string }[]>("pace_key").orderBy("pace_key");
    expect(rows.map((r) => r.pace_key)).toEqual(["whatsapp:1065", "whatsapp:2077"]);
  });

  it("takes a slot with one write of the number's row: one WAL record of channel_pace per admitted send, no lock record", async () => {
    // pg_walinspect reads the records the sends wrote; those of the number's row name its relfilenode.
    await db.raw("create extension if not exists pg_walinspect");
    const store = createNotificationStore(db, db as unknown as pg.Pool);
    const paced = async (i: number) => {
      const recorded = await store.record({
        tenantId: "beta",
        idempotencyKey: `wal-${i}`,
        fingerprint: "wal",
        owner: "00000000-0000-4000-8000-000000000001",
        notificationId: `ntf_wal${String(i).padStart(21, "0")}`,
        transcriptEntryId: `msg_wal${String(i).padStart(21, "0")}`,
        recipient: `+4477009${String(20000 + i)}`,
        type: "reminder",
        text: "reminder",
        actorReference: "crm",
        delegationReference: null,
        requestId: `req-wal-${i}`,
        leaseMs: 30_000,
        ttlMs: 3_600_000,
        testingAllowance: 1000,
        // A pace with room for every send of this test.
        pace: { key: "whatsapp:wal", perSecond: 1000, burst: 1000 },
      });
      expect(recorded.recorded).toBe(true);
    };
    await paced(0); // makes the number's row
    const { rows: rel } = await db.raw<{ rows: { node: string }[] }>(
      "select pg_relation_filenode('channel_pace')::text as node",
    );
    const lsn = async () =>
      (await db.raw<{ rows: { lsn: string }[] }>("select pg_current_wal_flush_lsn()::text as lsn")).rows[0]!.lsn;
    const from = await lsn();
    for (let i = 1; i <= 3; i++) await paced(i);
    const to = await lsn();
    const { rows } = await db.raw<{ rows: { record_type: string }[] }>(
      `select record_type from pg_get_wal_records_info(?::pg_lsn, ?::pg_lsn)
        where resource_manager = 'Heap' and block_ref like ?`,
      [from, to, `%/${rel[0]!.node} %`],
    );
    // Before (select … for update, then update): LOCK and HOT_UPDATE for each send.
    expect(rows.map((r) => r.record_type)).toEqual(["HOT_UPDATE", "HOT_UPDATE", "HOT_UPDATE"]);
  });

  it("never takes a slot for a send refused for another reason or a repeat of a key", async () => {
    await db("recipient_opt_outs").insert({ tenant_id: "beta", recipient: "447700900999" });
    const optedOut = { ...request("beta", "opted-out"), to: "+447700900999" };
    const refusals = await Promise.all(
      Array.from({ length: BURST + 2 }, (_, i) => send(i % 2, { ...optedOut, idempotencyKey: `opted-out-${i}` })),
    );
    expect(refusals.map(codeOf)).toEqual(refusals.map(() => "partner.recipient_opted_out"));
    const repeatMe = request("beta", "repeat-me");
    const first = await send(0, repeatMe);
    expect(first.ok).toBe(true);
    const repeats = await Promise.all(Array.from({ length: BURST + 2 }, (_, i) => send(i % 2, repeatMe)));
    expect(repeats.map((a) => a.ok && a.response.replayed)).toEqual(repeats.map(() => true));
    // One slot taken (the first send): BURST − 1 more are admitted now.
    const rest = await Promise.all(Array.from({ length: BURST }, (_, i) => send(i % 2, request("beta", `rest-${i}`))));
    expect(rest.filter((a) => a.ok)).toHaveLength(BURST - 1);
  });
});

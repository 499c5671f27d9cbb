/**
 * Pacing (issue 32 item 6, docs/notifications.md "Pacing"): two notify NotificationService gRPC
 * servers, each with its own pools, over ONE scratch database, sending through the Cloud API
 * stand-in. The limiter is exact across them because it is one row per number in that database.
 *
 * No timing is asserted: the pace in these tests is one send per 100 s, so however slowly the
 * machine runs them, a slot never frees up during a test; passing time is simulated by moving the
 * number's row back (what waiting Retry-After does), and the waits are checked against the row.
 */
import { createHash } from "node:crypto";
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
    // Every test starts with idle numbers (no pace sequence: the next send makes it) and an empty stand-in.
    for (const name of await paceSequences()) await db.raw(`drop sequence ${name}`);
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

  /** The pace sequences there are (one per number that has had a send), by name. */
  const paceSequences = async () =>
    (
      await db.raw<{ rows: { name: string }[] }>(
        "select relname as name from pg_class where relkind = 'S' and relname like 'pace\\_%' order by 1",
      )
    ).rows.map((r) => r.name);
  const md5 = (text: string) => createHash("md5").update(text).digest("hex");
  const retryAfterOf = (answer: Answer) => (answer.ok ? undefined : answer.error.metadata.get("retry-after")[0]);
  const codeOf = (answer: Answer) => (answer.ok ? "ok" : String(answer.error.metadata.get("error-code")[0]));
  const dbNow = async () => (await db.raw<{ rows: { now: Date }[] }>("select clock_timestamp() as now")).rows[0]!.now;
  /** A number's theoretical arrival time: its pace sequence holds it in microseconds since 1970. */
  const tatOf = async (key: string) =>
    new Date(
      Number(
        (await db.raw<{ rows: { us: string }[] }>("select pg_sequence_last_value(pace_sequence(?)) as us", [key]))
          .rows[0]!.us,
      ) / 1000,
    );

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

    // Waiting Retry-After, simulated: the number's arrival time moves back by that much.
    await db.raw(
      "select setval(pace_sequence(?), pg_sequence_last_value(pace_sequence(?)) - ?::bigint * 1000000, true)",
      ["whatsapp:1065", "whatsapp:1065", retryAfter],
    );
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
    // One sequence per number.
    expect(await paceSequences()).toEqual([`pace_${md5("whatsapp:1065")}`, `pace_${md5("whatsapp:2077")}`].sort());
  });

  it("takes a slot without holding anything until the commit: a send through a number whose other send has not committed takes its slot at once", async () => {
    const store = createNotificationStore(db, db as unknown as pg.Pool);
    const recordSend = (i: number) =>
      store.record({
        tenantId: "beta",
        idempotencyKey: `open-${i}`,
        fingerprint: "open",
        owner: "00000000-0000-4000-8000-000000000001",
        notificationId: `ntf_open${String(i).padStart(20, "0")}`,
        transcriptEntryId: `msg_open${String(i).padStart(20, "0")}`,
        recipient: `+4477009${String(20000 + i)}`,
        type: "reminder",
        text: "reminder",
        actorReference: "crm",
        delegationReference: null,
        requestId: `req-open-${i}`,
        leaseMs: 30_000,
        ttlMs: 3_600_000,
        testingAllowance: 1000,
        pace: { key: "whatsapp:open", perSecond: 1000, burst: 1000 },
      });
    expect((await recordSend(0)).recorded).toBe(true); // makes the number's sequence
    // Another tenant's send through the number (its own month's count, its own key), on a
    // connection of its own, its transaction left open: it holds what it took until its commit.
    const open = new pg.Client({ connectionString: scratch.url, options: `-c search_path=${NOTIFY_SCHEMA}` });
    await open.connect();
    try {
      await open.query("begin");
      const { rows } = await open.query<{ outcome: string }>(
        `select outcome from record_send('acme', 'open-held', 'f', '00000000-0000-4000-8000-000000000002', 30, 3600,
           'ntf_openheld00000000000000', 'msg_openheld00000000000000', '+447700930000', 'reminder', 'x', 'crm', null,
           'req', 1000, 800, '', '', ''::bytea, '', '', ''::bytea, '', 'whatsapp:open', 0.001, 0.999)`,
      );
      expect(rows[0]!.outcome).toBe("recorded");
      // Another send through the same number: before (the number's row updated by each send and
      // locked until its commit) it waited for that commit, here it gave up after 2 s.
      await db.raw("set statement_timeout = 2000");
      try {
        const started = performance.now();
        expect((await recordSend(1)).recorded).toBe(true);
        expect(performance.now() - started).toBeLessThan(1_000);
      } finally {
        await db.raw("set statement_timeout = 0");
      }
    } finally {
      await open.query("rollback").catch(() => undefined);
      await open.end();
    }
    // The send left open was rolled back: two sends recorded. Its slot stays taken (a sequence is
    // not transactional): one slot short, never one too many.
    expect(await db("notification_commands").where("idempotency_key", "like", "open-%").count({ n: "*" })).toEqual([
      { n: "2" },
    ]);
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

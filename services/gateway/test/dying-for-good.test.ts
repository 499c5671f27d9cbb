/**
 * Dying for good (issue 17, item 5), notify's part: two notify processes on one database and event
 * bus, a gateway given both addresses (NOTIFY_ADDR as a list, balanced round_robin), and one of them
 * killed with -9 in the middle of 40 sends and 40 usage records racing on both, never restarted.
 * - Sends: each notification reaches the provider at most once; every send answered 2xx reached it
 *   exactly once. A send cut off with the process is retried by the gateway on the other process:
 *   one the dead process had not recorded is sent there (2xx); one it had recorded answers 409
 *   `idempotency.in_progress` (its claim on the key), and its repeats with the same key end 409
 *   `partner.action_outcome_unknown` once NOTIFICATION_LEASE has passed, never sending twice.
 * - Polls: the projector's events the dead process had fetched come back to the survivor after
 *   PROJECTIONS_ACK_WAIT, and an outcome's event it had committed but not yet sent (published at
 *   once, gathered for OUTBOX_GATHER) is published by the survivor's relay after
 *   OUTBOX_REPUBLISH_AFTER; every event of the tenant on the stream is applied exactly once (one
 *   projection_events row, one activity row each, one work row per notification).
 * - Usage cap: the soft and the hard cap each cross exactly once for the month.
 * The bounds are in docs/operations.md, "When a process dies". About 10 s.
 */
import { startCloudApiStub, type CloudApiStub } from "@platform/local-stack/cloud-api-stub";
import { eventually } from "@platform/local-stack/https-receiver";
import { testNatsUrl } from "@platform/local-stack/nats-namespace";
import type { ServiceProcess } from "@platform/local-stack/service-process";
import { UsageServiceService } from "@platform/proto/notify/v1/usage";
import { CLIENT_CHANNEL_OPTIONS, createClient } from "@platform/service-kit/grpc-client";
import { connect, type NatsConnection } from "nats";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestStack, type TestStack } from "./stack.js";

const SENDS = 40;
const RECORDS = 40;
/** Short leases and ack wait so recovery takes seconds (defaults: 30 s each). */
const notifyEnv = {
  NOTIFY_CHANNEL_PROVIDER: "whatsapp",
  WHATSAPP_ACCESS_TOKEN: "EAAG-dying-token",
  WHATSAPP_PHONE_NUMBER_ID: "106540352242922",
  WHATSAPP_TIMEOUT: "1s",
  NOTIFICATION_LEASE: "2s",
  IDEMPOTENCY_LEASE: "2s",
  PROJECTIONS_ACK_WAIT: "2s",
  OUTBOX_POLL_INTERVAL: "200ms",
  // An outcome's event published at once but still gathered in the dead process's buffer is
  // published again by the survivor's relay after this (default 1 min).
  OUTBOX_REPUBLISH_AFTER: "2s",
};

describe("a notify process killed with -9 under sends, usage records and projection, never restarted", () => {
  let stub: CloudApiStub;
  let stack: TestStack;
  let victim: ServiceProcess;
  let url: string;
  let tenant: string;
  let key: string;
  let db: pg.Client;
  let nc: NatsConnection;

  beforeAll(async () => {
    stub = await startCloudApiStub();
    stack = await startTestStack({}, { ...notifyEnv, WHATSAPP_API_BASE_URL: stub.url });
    victim = await stack.startNotify();
    const addresses = [stack.notify, victim].map((p) => `127.0.0.1:${p.listening.grpcPort as number}`);
    const gateway = await stack.startGateway({ NOTIFY_ADDR: addresses.join(",") });
    url = `http://127.0.0.1:${gateway.listening.port as number}`;
    tenant = (await stack.admin("tenant", "create", "--name", "Dying", "--plan", "commercial")).id as string;
    await stack.admin("tenant", "activate", "--id", tenant);
    const scopes = "notification:send,tenant:read,usage:manage";
    key = (await stack.admin("key", "create", "--scopes", scopes, "--tenants", tenant)).key as string;
    db = new pg.Client({ connectionString: stack.scratch.url });
    await db.connect();
    nc = await connect({ servers: testNatsUrl() });
  }, 60_000);
  afterAll(async () => {
    await nc?.close();
    await db?.end();
    await stack?.stop();
    await stub?.close();
  });

  const call = async (method: string, path: string, headers: Record<string, string>, body: object) => {
    const res = await fetch(`${url}/api/v1/tenants/${tenant}${path}`, {
      method,
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json", ...headers },
      body: JSON.stringify(body),
    });
    return { status: res.status, code: ((await res.json()) as { code?: string }).code };
  };
  const count = async (sql: string, params: unknown[]) =>
    Number((await db.query<{ n: string }>(sql, params)).rows[0]!.n);

  it("sends each notification at most once, applies each event once, crosses each cap once", async () => {
    const limits = await call(
      "PUT",
      "/usage/limits",
      { "idempotency-key": `caps-${tenant}` },
      { softCap: 150, hardCap: 300 },
    );
    expect(limits).toEqual({ status: 200, code: undefined });
    // Slow enough that several sends are on their way to the provider through the victim at the kill.
    stub.respondWith({ kind: "slow", ms: 300 });
    const phone = (i: number) => `+4477009${String(30000 + i)}`;
    /** Every answer each send got, in order: the last is its outcome. */
    const answers: { status: number; code?: string }[][] = Array.from({ length: SENDS }, () => []);
    let answered = 0;
    let next = 0;
    const sendLane = async () => {
      while (next < SENDS) {
        const i = next++;
        for (;;) {
          const answer = await call(
            "POST",
            "/notifications",
            { "idempotency-key": `dying-send-${i}` },
            {
              to: phone(i),
              type: "reminder",
              clientName: "Ana",
              businessName: "Paws",
              serviceName: "grooming",
              when: "Mon 3 May 10:00",
              actor: { actorReference: "crm-user-7" },
            },
          );
          answers[i]!.push(answer);
          // Repeated with the same key while the answer says so (409 while the dead process's claim
          // on the key holds; 503 if no process could take it).
          if (answer.status !== 503 && answer.code !== "idempotency.in_progress") break;
          await new Promise((resolve) => setTimeout(resolve, 250));
        }
        answered += 1;
      }
    };
    const usage = createClient(
      UsageServiceService,
      `ipv4:${[stack.notify, victim].map((p) => `127.0.0.1:${p.listening.grpcPort as number}`).join(",")}`,
      {
        timeoutMs: 2_000,
        channelOptions: {
          ...CLIENT_CHANNEL_OPTIONS,
          "grpc.service_config": JSON.stringify({ loadBalancingConfig: [{ round_robin: {} }] }),
        },
      },
    );
    let recorded = 0;
    let failedRecords = 0;
    let nextRecord = 0;
    const recordLane = async () => {
      while (nextRecord < RECORDS) {
        const i = nextRecord++;
        for (;;) {
          try {
            // The same record id on a retry: counted once.
            await usage.recordUsage(
              { tenantId: tenant, tokens: "10", recordId: `dying-${i}` },
              { requestId: `u-${i}` },
            );
            break;
          } catch {
            failedRecords += 1;
            await new Promise((resolve) => setTimeout(resolve, 100));
          }
        }
        recorded += 1;
        await new Promise((resolve) => setTimeout(resolve, 40));
      }
    };
    try {
      const load = Promise.all([...Array.from({ length: 8 }, sendLane), ...Array.from({ length: 4 }, recordLane)]);
      await eventually("load under way", () => answered >= 10 && recorded >= 8, 20_000);
      const killedAt = Date.now();
      await victim.stop("SIGKILL");
      await load;
      const loadSeconds = (Date.now() - killedAt) / 1000;
      // Both processes had taken calls before the kill.
      const handled = (p: ServiceProcess) => p.logs.filter((l) => l.msg === "rpc handled").length;
      expect(handled(victim)).toBeGreaterThan(0);
      // ... and the victim was one of the projector's two consumers (the stack logs at debug).
      expect(victim.logs.some((l) => l.msg === "events projected" || l.msg === "event projected")).toBe(true);

      // Sends: outcomes, and what the provider got.
      const outcomes = answers.map((a) => a.at(-1)!);
      for (const outcome of outcomes) {
        expect(outcome.status < 300 || outcome.code === "partner.action_outcome_unknown", JSON.stringify(outcome)).toBe(
          true,
        );
      }
      const cutOff = answers.filter((a) => a.length > 1);
      for (const a of cutOff) {
        expect([
          { status: 409, code: "idempotency.in_progress" },
          { status: 503, code: "service.unavailable" },
        ]).toContainEqual(a[0]);
        for (const between of a.slice(1, -1)) {
          expect([503, 409]).toContain(between.status);
        }
      }
      // The Cloud API takes the number without its "+".
      const toOf = (body: unknown) => `+${(body as { to?: string }).to ?? ""}`.replace(/^\+\+/, "+");
      const received = new Map<string, number>();
      for (const r of stub.requests) received.set(toOf(r.body), (received.get(toOf(r.body)) ?? 0) + 1);
      expect([...received.values()].filter((n) => n > 1)).toEqual([]);
      outcomes.forEach((outcome, i) => {
        if (outcome.status < 300) expect(received.get(phone(i)), phone(i)).toBe(1);
      });

      // Usage: every record counted once; each cap crossed once.
      expect(await count("select tokens_used as n from notify.usage_months where tenant_id = $1", [tenant])).toBe(
        RECORDS * 10,
      );
      const crossings = await db.query<{ soft: string | null; hard: string | null }>(
        "select soft_event_id as soft, hard_event_id as hard from notify.usage_months where tenant_id = $1",
        [tenant],
      );
      expect(crossings.rows).toHaveLength(1);
      const capEvents = [crossings.rows[0]!.soft, crossings.rows[0]!.hard];
      expect(capEvents.every(Boolean)).toBe(true);

      // Polls: every event of the tenant on the stream applied exactly once, the outbox drained.
      const ns = stack.natsNamespace;
      const onStream = async () => {
        const jsm = await nc.jetstreamManager();
        const info = await jsm.streams.info(`${ns}EVENTS`, { subjects_filter: `${ns}events.${tenant}.>` });
        const byType = new Map<string, number>();
        for (const [subject, n] of Object.entries(info.state.subjects ?? {})) {
          byType.set(subject.slice(`${ns}events.${tenant}.`.length), n);
        }
        return byType;
      };
      const projectedTypes = async () =>
        new Map(
          (
            await db.query<{ type: string; n: string }>(
              "select type, count(*) as n from notify.projection_events where tenant_id = $1 group by type",
              [tenant],
            )
          ).rows.map((r) => [r.type, Number(r.n)]),
        );
      await eventually(
        "every event on the stream projected, the outbox drained",
        async () =>
          JSON.stringify([...(await onStream())].sort()) === JSON.stringify([...(await projectedTypes())].sort()) &&
          (await count("select count(*) as n from notify.outbox", [])) === 0,
        15_000,
      );
      const projectedSeconds = (Date.now() - killedAt) / 1000;
      // The bounds (docs/operations.md, "When a process dies"), with 5 s of margin for a loaded
      // machine: a cut-off send is settled once NOTIFICATION_LEASE (2 s) has passed, and the events
      // the dead process had fetched are projected once PROJECTIONS_ACK_WAIT (2 s) has passed, and
      // those it had not yet sent once OUTBOX_REPUBLISH_AFTER (2 s) has passed.
      expect(loadSeconds).toBeLessThan(2 + 5);
      expect(projectedSeconds).toBeLessThan(loadSeconds + 2 + 5);
      const byType = await onStream();
      const events = [...byType.values()].reduce((a, b) => a + b, 0);
      expect(byType.get("usage.threshold_crossed")).toBe(2);
      const thresholdIds = await db.query<{ event_id: string }>(
        "select event_id from notify.projection_events where tenant_id = $1 and type = 'usage.threshold_crossed'",
        [tenant],
      );
      expect(thresholdIds.rows.map((r) => r.event_id).sort()).toEqual([...capEvents].sort());
      // One row per event in activity, none twice; one work row per notification command.
      const activity = await db.query<{ event_id: string; n: string }>(
        "select event_id, count(*) as n from notify.projection_activity where tenant_id = $1 group by event_id",
        [tenant],
      );
      expect(activity.rows).toHaveLength(events);
      expect(activity.rows.filter((r) => r.n !== "1")).toEqual([]);
      const commands = await count("select count(*) as n from notify.notification_commands where tenant_id = $1", [
        tenant,
      ]);
      expect(commands).toBe(SENDS);
      expect(await count("select count(*) as n from notify.projection_work where tenant_id = $1", [tenant])).toBe(
        SENDS,
      );
      console.log(
        `[notify kill -9] sends=${SENDS} cut_off=${cutOff.length} outcome_unknown=${outcomes.filter((o) => o.status >= 300).length} ` +
          `provider_requests=${stub.requests.length} failed_records=${failedRecords} events=${events} ` +
          `load_done_after_kill=${loadSeconds.toFixed(1)}s projected_after_kill=${projectedSeconds.toFixed(1)}s`,
      );
    } finally {
      usage.close();
    }
  }, 45_000);
});

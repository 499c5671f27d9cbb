/**
 * Pacing through the partner API (issue 32 item 6, docs/notifications.md "Pacing"): two notify
 * processes over one database behind one gateway, the sandbox channel (each tenant a stand-in
 * number of its own) paced at 1 send per second with a burst of 1. Counts, not speeds: the sends
 * issued at once are either admitted or refused 429 `partner.channel_rate_limited` with
 * `Retry-After: 1` (at this pace no wait is longer than one second), what was admitted is exactly
 * what the database holds, and a refused key sends once after waiting its Retry-After.
 */
import type { ServiceProcess } from "@platform/local-stack/service-process";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { OpenApiContract } from "./openapi-contract.js";
import { grpcAddresses, startTestStack, type TestStack } from "./stack.js";
import { tenantApiCall } from "./tenant-api-call.js";

const SENDS = 10;

describe("sends paced per number across two notify processes", () => {
  let stack: TestStack;
  let notify2: ServiceProcess;
  let gatewayUrl: string;
  let contract: OpenApiContract;
  let db: pg.Client;
  let key: string;
  let tenant: string;
  let n = 0;

  const call = tenantApiCall({ gatewayUrl: () => gatewayUrl, defaultKey: () => key, contract: () => contract });
  const body = () =>
    JSON.stringify({
      to: `+4477009${String(10000 + n++).padStart(5, "0")}`,
      type: "update",
      clientName: "Ana",
      businessName: "Paws & Co",
      message: "the shop opens at nine",
      actor: { actorReference: "crm-user-7" },
    });
  const send = (idempotencyKey: string, json: string) =>
    call("POST", `/api/v1/tenants/${tenant}/notifications`, {
      headers: { "content-type": "application/json", "idempotency-key": idempotencyKey },
      body: json,
    });

  beforeAll(async () => {
    const notifyEnv = { NOTIFY_CHANNEL_MESSAGES_PER_SECOND: "1", NOTIFY_CHANNEL_BURST: "1" };
    stack = await startTestStack({}, notifyEnv);
    notify2 = await stack.startNotify(notifyEnv);
    const gateway = await stack.startGateway({ NOTIFY_ADDR: grpcAddresses(stack.notify, notify2) });
    gatewayUrl = `http://127.0.0.1:${gateway.listening.port as number}`;
    contract = new OpenApiContract(
      (await (await fetch(`${gatewayUrl}/api/v1/openapi.json`)).json()) as ConstructorParameters<
        typeof OpenApiContract
      >[0],
    );
    tenant = (await stack.admin("tenant", "create", "--name", "Paced")).id as string;
    await stack.admin("tenant", "activate", "--id", tenant);
    key = (await stack.admin("key", "create", "--scopes", "notification:send,tenant:read", "--tenants", tenant))
      .key as string;
    db = new pg.Client({ connectionString: stack.scratch.url });
    await db.connect();
  });
  afterAll(async () => {
    await db?.end();
    await stack?.stop();
  });

  const count = async (sql: string) => Number((await db.query<{ n: string }>(sql, [tenant])).rows[0]!.n);

  it("answers 429 partner.channel_rate_limited with Retry-After 1 over the pace, leaves nothing of those, and a refused key sends once later", async () => {
    const requests = Array.from({ length: SENDS }, (_, i) => ({ key: `paced-send-${i}`, body: body() }));
    const answers = await Promise.all(requests.map((r) => send(r.key, r.body)));
    const statuses = answers.map((a) => a.res.status);
    expect(
      statuses.filter((status) => status !== 200 && status !== 429),
      JSON.stringify(answers.map((a) => a.body)),
    ).toEqual([]);
    const refused = answers.flatMap((a, i) => (a.res.status === 429 ? [{ answer: a, request: requests[i]! }] : []));
    const accepted = SENDS - refused.length;
    expect(accepted).toBeGreaterThanOrEqual(1);
    expect(refused.length).toBeGreaterThanOrEqual(1);
    for (const { answer } of refused) {
      expect(answer.body.code).toBe("partner.channel_rate_limited");
      expect(answer.res.headers.get("retry-after")).toBe("1");
    }

    // Exactly the accepted sends are recorded: keys, commands, transcript entries.
    expect(await count("select count(*) as n from notify.idempotency_keys where scope = $1")).toBe(accepted);
    expect(await count("select count(*) as n from notify.notification_commands where tenant_id = $1")).toBe(accepted);
    expect(await count("select count(*) as n from notify.conversation_messages where tenant_id = $1")).toBe(accepted);

    // After Retry-After the refused request, with its key, sends exactly once; a repeat replays it.
    const { request } = refused[0]!;
    await new Promise((resolve) => setTimeout(resolve, 1_100));
    const retried = await send(request.key, request.body);
    expect(retried.res.status).toBe(200);
    expect(retried.res.headers.get("idempotent-replayed")).toBeNull();
    // A repeat of a key never takes a slot: answered at once, even with the number just used.
    const repeated = await send(request.key, request.body);
    expect(repeated.res.status).toBe(200);
    expect(repeated.res.headers.get("idempotent-replayed")).toBe("true");
    expect(repeated.body.notificationId).toBe(retried.body.notificationId);
    expect(await count("select count(*) as n from notify.notification_commands where tenant_id = $1")).toBe(
      accepted + 1,
    );
  });
});

import { execFile } from "node:child_process";
import { createHmac, timingSafeEqual } from "node:crypto";
import { join } from "node:path";
import { promisify } from "node:util";
import { startCloudApiStub, type CloudApiStub } from "@platform/local-stack/cloud-api-stub";
import {
  createTestCertificates,
  eventually,
  startReceiver,
  type TestCertificates,
  type TestReceiver,
} from "@platform/local-stack/https-receiver";
import type { ServiceProcess } from "@platform/local-stack/service-process";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { OpenApiContract } from "./openapi-contract.js";
import { tenantApiCall, type Answer } from "./tenant-api-call.js";
import { grpcAddresses, startTestStack, type TestStack } from "./stack.js";

/**
 * Leaving the free testing allowance (issue 22) against the real stack: two notify processes on
 * one database (a gateway in front of each), an allowance of 20 sends (NOTIFY_TESTING_ALLOWANCE),
 * notify pointed at a local server that answers as the WhatsApp Cloud API does and counts the
 * sends it receives; a local HTTPS receiver subscribed to the plan events. Every answer is checked
 * against /api/v1/openapi.json.
 */
const ALLOWANCE = 20;
const run = promisify(execFile);
const adminEntry = join(import.meta.dirname, "..", "dist", "src", "cli", "admin.js");

/** The `Service-Signature` check a receiver makes: t=<unix seconds>,v1=<hex HMAC-SHA256 of "t.body">. */
function verifySignature(body: Buffer, header: string, secret: string): boolean {
  const entries = header.split(",").map((entry) => entry.trim().split("=") as [string, string]);
  const t = entries.find(([name]) => name === "t")?.[1];
  const expected = createHmac("sha256", secret).update(`${t}.${body.toString()}`).digest();
  return entries
    .filter(([name]) => name === "v1")
    .some(([, value]) => value.length === 64 && timingSafeEqual(Buffer.from(value, "hex"), expected));
}

describe("the testing allowance and plan changes", () => {
  let stack: TestStack;
  let stub: CloudApiStub;
  let certs: TestCertificates;
  let receiver: TestReceiver;
  let contract: OpenApiContract;
  let db: pg.Client;
  let notify2: ServiceProcess;
  /** [the gateway over the first notify, the gateway over the second]. */
  const gateways: string[] = [];
  let key: string;
  let n = 0;
  const phone = () => `+4477008${String(10000 + n++).padStart(5, "0")}`;
  const uniqueKey = (label: string) => `${label}-${Date.now()}-${n++}`;

  const callVia = (gateway: number) =>
    tenantApiCall({ gatewayUrl: () => gateways[gateway]!, defaultKey: () => key, contract: () => contract });

  const send = (tenantId: string, opts: { idempotencyKey?: string; via?: number; to?: string } = {}) =>
    callVia(opts.via ?? n % 2)("POST", `/api/v1/tenants/${tenantId}/notifications`, {
      headers: { "content-type": "application/json", "idempotency-key": opts.idempotencyKey ?? uniqueKey("send") },
      body: JSON.stringify({
        to: opts.to ?? phone(),
        type: "update",
        clientName: "Ana",
        businessName: "Paws & Co",
        message: "the shop opens at nine",
        actor: { actorReference: "crm-user-7" },
      }),
    });

  const tenantRecord = async (tenantId: string, via = 0) => {
    const { res, body } = await callVia(via)("GET", `/api/v1/tenants/${tenantId}`);
    expect(res.status).toBe(200);
    return body;
  };

  const poll = async (tenantId: string, what: "activity" | "attention") => {
    const { res, body } = await callVia(0)("GET", `/api/v1/tenants/${tenantId}/${what}?limit=100`);
    expect(res.status).toBe(200);
    return body.data as Record<string, unknown>[];
  };

  /** The admin CLI against the second notify process; rejects with its stderr on a non-zero exit. */
  const admin = async (...args: string[]) => {
    const { stdout } = await run(process.execPath, [adminEntry, ...args], {
      env: {
        PATH: process.env.PATH ?? "",
        DATABASE_URL: stack.scratch.url,
        NOTIFY_ADDR: grpcAddresses(notify2),
      },
    });
    return JSON.parse(stdout) as Record<string, unknown>;
  };
  const plan = (tenantId: string, to: string, reason: string, ...more: string[]) =>
    admin("tenant", "plan", "--id", tenantId, "--plan", to, "--reason", reason, ...more);

  const providerCalls = () => stub.requests.length;
  const expectProblem = (answer: Answer, status: number, code: string) =>
    expect({ status: answer.res.status, code: answer.body.code }).toEqual({ status, code });
  const remainingOf = (answer: Answer) => answer.res.headers.get("x-testing-allowance-remaining");

  /** `count` sends at once; every one must be accepted. */
  async function sendAll(tenantId: string, count: number): Promise<void> {
    const answers = await Promise.all(Array.from({ length: count }, (_, i) => send(tenantId, { via: i % 2 })));
    expect(answers.map((a) => a.res.status)).toEqual(answers.map(() => 200));
  }

  async function newTenant(name: string): Promise<string> {
    const id = (await stack.admin("tenant", "create", "--name", name)).id as string;
    await stack.admin("tenant", "activate", "--id", id);
    return id;
  }

  /** Sends made this month by the tenant as the commands record them: [counted (testing), all accepted]. */
  async function commands(tenantId: string): Promise<{ counted: number; accepted: number }> {
    const { rows } = await db.query<{ counted: string; accepted: string }>(
      `select count(*) filter (where counted) as counted, count(*) as accepted from notify.notification_commands
       where tenant_id = $1 and state <> 'failed'`,
      [tenantId],
    );
    return { counted: Number(rows[0]!.counted), accepted: Number(rows[0]!.accepted) };
  }

  beforeAll(async () => {
    stub = await startCloudApiStub();
    const notifyEnv = {
      NOTIFY_TESTING_ALLOWANCE: String(ALLOWANCE),
      NOTIFY_CHANNEL_PROVIDER: "whatsapp",
      WHATSAPP_API_BASE_URL: stub.url,
      WHATSAPP_ACCESS_TOKEN: "EAAG-test-token",
      WHATSAPP_PHONE_NUMBER_ID: "106540352242922",
      WHATSAPP_TIMEOUT: "2s",
    };
    certs = await createTestCertificates();
    receiver = await startReceiver({ key: certs.key, cert: certs.cert });
    stack = await startTestStack({ UPSTREAM_TIMEOUT: "8s" }, notifyEnv, { NODE_EXTRA_CA_CERTS: certs.caPath });
    notify2 = await stack.startNotify(notifyEnv);
    const gateway2 = await stack.startGateway({ NOTIFY_ADDR: grpcAddresses(notify2), UPSTREAM_TIMEOUT: "8s" });
    gateways.push(stack.url, `http://127.0.0.1:${gateway2.listening.port as number}`);
    contract = new OpenApiContract(
      (await (await fetch(`${stack.url}/api/v1/openapi.json`)).json()) as ConstructorParameters<
        typeof OpenApiContract
      >[0],
    );
    db = new pg.Client({ connectionString: stack.scratch.url });
    await db.connect();
  });
  afterAll(async () => {
    await db?.end();
    await stack?.stop();
    await stub?.close();
    await receiver?.close();
    await certs?.remove();
  });

  /** A key for the tenants made so far (a new key per test: grants are fixed at creation). */
  async function keyFor(...tenants: string[]) {
    key = (
      await stack.admin(
        "key",
        "create",
        "--scopes",
        "notification:send,tenant:read,webhook:manage",
        "--tenants",
        tenants.join(","),
      )
    ).key as string;
  }

  it("exhausts at exactly the allowance on both replicas, lifts it at once on an upgrade, and the refused key sends after it", async () => {
    const tenant = await newTenant("Exhausted");
    await keyFor(tenant);
    const fresh = await tenantRecord(tenant);
    expect(fresh).toMatchObject({
      plan: "testing",
      planReason: null,
      planChangedAt: null,
      testingAllowance: { limit: ALLOWANCE, used: 0, remaining: ALLOWANCE },
    });
    const version = fresh.version as number;
    const before = providerCalls();

    // The allowance, alternating between the two gateways (and so the two notify processes).
    const remaining: string[] = [];
    for (let i = 0; i < ALLOWANCE; i++) {
      const answer = await send(tenant, { via: i % 2 });
      expect(answer.res.status).toBe(200);
      expect(answer.res.headers.get("x-testing-allowance-limit")).toBe(String(ALLOWANCE));
      expect(answer.res.headers.get("x-testing-allowance-reset")).toMatch(/^\d{4}-\d{2}-01T00:00:00\.000Z$/);
      remaining.push(remainingOf(answer)!);
    }
    expect(remaining).toEqual(Array.from({ length: ALLOWANCE }, (_, i) => String(ALLOWANCE - 1 - i)));

    const refusedKey = uniqueKey("refused");
    const refusedTo = phone();
    for (const via of [0, 1]) {
      const refused = await send(tenant, { idempotencyKey: refusedKey, via, to: refusedTo });
      expectProblem(refused, 409, "account.testing_allowance_exhausted");
      expect(remainingOf(refused)).toBeNull();
    }
    expect(providerCalls()).toBe(before + ALLOWANCE);
    expect((await tenantRecord(tenant, 1)).testingAllowance).toMatchObject({ used: ALLOWANCE, remaining: 0 });

    // A stale version is refused (412 tenant.version_mismatch) and changes nothing.
    await expect(
      plan(tenant, "commercial", "agreement_signed", "--expected-version", String(version + 7)),
    ).rejects.toMatchObject({
      stderr: expect.stringMatching(/tenant\.version_mismatch \(412\)/) as string,
    });
    expect((await tenantRecord(tenant)).plan).toBe("testing");

    const upgraded = await plan(tenant, "commercial", "agreement_signed", "--expected-version", String(version));
    expect(upgraded).toMatchObject({
      plan: "commercial",
      planReason: "agreement_signed",
      changed: true,
      version: version + 1,
      testingAllowance: null,
    });
    expect(Date.parse(upgraded.planChangedAt as string)).toBeGreaterThan(Date.now() - 60_000);

    // At once, on both processes: the same key that was refused sends now (applied, not a replay).
    const retried = await send(tenant, { idempotencyKey: refusedKey, via: 0, to: refusedTo });
    expect(retried.res.status).toBe(200);
    expect(retried.body.idempotencyStatus).toBe("applied");
    expect(remainingOf(retried)).toBeNull();
    const other = await send(tenant, { via: 1 });
    expect(other.res.status).toBe(200);
    expect(providerCalls()).toBe(before + ALLOWANCE + 2);
    // ... and the key now replays that send.
    const replay = await send(tenant, { idempotencyKey: refusedKey, via: 1, to: refusedTo });
    expect(replay.body).toMatchObject({ idempotencyStatus: "replayed", notificationId: retried.body.notificationId });
    expect(providerCalls()).toBe(before + ALLOWANCE + 2);

    // The same change again is a no-op success: nothing recorded, the version stays.
    const again = await plan(tenant, "commercial", "agreement_signed", "--expected-version", String(version));
    expect(again).toMatchObject({ plan: "commercial", changed: false, version: version + 1 });

    // The activity feed: one plan change with its reason and actor, each threshold once; the
    // exhausted attention item opened at 100% and closed by the upgrade.
    await expect
      .poll(
        async () =>
          (await poll(tenant, "activity")).filter(
            (item) => item.type === "tenant.plan_changed" || item.type === "usage.testing_allowance_threshold_crossed",
          ),
        { timeout: 15_000 },
      )
      .toEqual([
        expect.objectContaining({
          type: "tenant.plan_changed",
          subjectKind: "tenant",
          subjectId: tenant,
          state: "commercial",
          reasonCode: "plan.agreement_signed",
          actor: "admin:cli",
        }),
        expect.objectContaining({
          type: "usage.testing_allowance_threshold_crossed",
          state: "100_percent",
          reasonCode: "account.testing_allowance_exhausted",
        }),
        expect.objectContaining({
          type: "usage.testing_allowance_threshold_crossed",
          state: "80_percent",
          reasonCode: "account.testing_allowance_warning",
        }),
      ]);
    expect(await poll(tenant, "attention")).toEqual([]);
  }, 40_000);

  it("never overshoots the allowance when concurrent sends race an upgrade", async () => {
    const tenant = await newTenant("Racing");
    await keyFor(tenant);
    await sendAll(tenant, 15);
    const before = providerCalls();

    // Eight clients over both processes send without pause while the upgrade is issued and until
    // it has answered: the last 5 testing sends, refusals, then commercial sends.
    let upgraded = false;
    const upgrade = plan(tenant, "commercial", "card_saved").finally(() => {
      upgraded = true;
    });
    const answers: Answer[] = [];
    await Promise.all(
      Array.from({ length: 8 }, async (_, client) => {
        while (!upgraded) answers.push(await send(tenant, { via: client % 2 }));
      }),
    );
    expect(await upgrade).toMatchObject({ plan: "commercial", changed: true });

    const accepted = answers.filter((a) => a.res.status === 200);
    const refused = answers.filter((a) => a.res.status !== 200);
    for (const a of refused) expectProblem(a, 409, "account.testing_allowance_exhausted");
    expect(refused.length).toBeGreaterThan(0);
    expect(providerCalls() - before).toBe(accepted.length);
    // Exactly the allowance was counted on testing: the 5 left, each answered with what was left
    // after it (4..0, each once); every other accepted send was decided on commercial.
    const made = await commands(tenant);
    expect(made.counted).toBe(ALLOWANCE);
    expect(made.accepted).toBe(15 + accepted.length);
    const { rows } = await db.query<{ sends: number }>("select sends from notify.monthly_sends where tenant_id = $1", [
      tenant,
    ]);
    expect(rows[0]!.sends).toBe(ALLOWANCE);
    const left = accepted.map(remainingOf).filter((r): r is string => r !== null);
    expect(left.sort()).toEqual(["0", "1", "2", "3", "4"]);
    // After the upgrade every send goes through.
    for (const via of [0, 1]) expect((await send(tenant, { via })).res.status).toBe(200);
  }, 40_000);

  it("counts the month's sends on whichever plan after a downgrade mid-month", async () => {
    const tenant = await newTenant("Downgraded");
    const other = await newTenant("Downgraded too");
    await keyFor(tenant, other);
    const endpoint = await callVia(0)("POST", `/api/v1/tenants/${other}/webhooks`, {
      headers: { "content-type": "application/json", "idempotency-key": uniqueKey("endpoint") },
      body: JSON.stringify({
        url: receiver.url,
        description: "plan events",
        eventTypes: ["tenant.plan_changed", "usage.testing_allowance_threshold_crossed"],
      }),
    });
    expect(endpoint.res.status).toBe(201);
    const secret = endpoint.body.secret as string;

    // 5 as testing, 3 as commercial, back to testing: 8 of 20 used.
    await sendAll(tenant, 5);
    await plan(tenant, "commercial", "card_saved");
    await sendAll(tenant, 3);
    const down = await plan(tenant, "testing", "card_removed");
    expect(down).toMatchObject({
      plan: "testing",
      planReason: "card_removed",
      changed: true,
      testingAllowance: { limit: ALLOWANCE, used: 8, remaining: ALLOWANCE - 8 },
    });
    const next = await send(tenant, { via: 1 });
    expect(next.res.status).toBe(200);
    expect(remainingOf(next)).toBe(String(ALLOWANCE - 9));

    // 15 as testing, 10 as commercial, back to testing: 25 >= 20, exhausted at once; the
    // downgrade itself announces both thresholds and opens the attention item.
    await sendAll(other, 15);
    await plan(other, "commercial", "agreement_signed");
    await sendAll(other, 10);
    expect(await plan(other, "testing", "agreement_ended")).toMatchObject({
      testingAllowance: { used: 25, remaining: 0 },
    });
    const before = providerCalls();
    for (const via of [0, 1]) expectProblem(await send(other, { via }), 409, "account.testing_allowance_exhausted");
    expect(providerCalls()).toBe(before);
    await expect
      .poll(async () => (await poll(other, "attention")).map((item) => [item.kind, item.subjectId, item.reasonCode]), {
        timeout: 15_000,
      })
      .toEqual([["testing_allowance_exhausted", other, "account.testing_allowance_exhausted"]]);
    await expect
      .poll(
        async () =>
          (await poll(other, "activity"))
            .filter((item) => item.type === "usage.testing_allowance_threshold_crossed")
            .map((item) => item.state)
            .sort(),
        { timeout: 15_000 },
      )
      .toEqual(["100_percent", "80_percent"]);
    // The same facts reach the subscribed endpoint through the webhooks pipeline, signed, once each.
    const delivered = () =>
      receiver.requests.map((request) => {
        expect(verifySignature(request.body, request.headers["service-signature"] as string, secret)).toBe(true);
        return JSON.parse(request.body.toString()) as {
          id: string;
          type: string;
          data: { object: Record<string, unknown> };
        };
      });
    await eventually("four plan events at the receiver", () => delivered().length >= 4);
    await new Promise((resolve) => setTimeout(resolve, 1000));
    const events = delivered();
    expect(new Set(events.map((event) => event.id)).size).toBe(events.length);
    expect(
      events.map((event) => `${event.type} ${String(event.data.object.state ?? event.data.object.threshold)}`).sort(),
    ).toEqual([
      "tenant.plan_changed commercial",
      "tenant.plan_changed testing",
      "usage.testing_allowance_threshold_crossed 100_percent",
      "usage.testing_allowance_threshold_crossed 80_percent",
    ]);
    expect(events.find((event) => event.data.object.threshold === "100_percent")!.data.object).toMatchObject({
      tenant_id: other,
      reason_code: "account.testing_allowance_exhausted",
      allowance: ALLOWANCE,
      remaining: 0,
    });

    const changes = (await poll(other, "activity"))
      .filter((item) => item.type === "tenant.plan_changed")
      .map((item) => [item.state, item.reasonCode]);
    expect(changes).toEqual([
      ["testing", "plan.agreement_ended"],
      ["commercial", "plan.agreement_signed"],
    ]);
  }, 40_000);
});

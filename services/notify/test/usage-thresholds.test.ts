/**
 * usage.threshold_crossed end to end (issue 10, item 1): usage recorded through notify's
 * UsageService (in-process, real gRPC, real Postgres) by 50 concurrent clients crosses the soft and
 * the hard cap in one UTC month and again in the next (an injected clock moves across the month
 * boundary); notify's outbox relay publishes to a real NATS namespace and a real webhooks process
 * delivers, signed, to an HTTPS receiver subscribed to usage.threshold_crossed: exactly one event
 * per cap per month. Lowering a cap below this month's usage crosses it at most once a month.
 */
import type { ServiceError } from "@grpc/grpc-js";
import { verifyWebhook } from "@platform/webhook-verifier";
import { eventually, type TestReceiver } from "@platform/local-stack/https-receiver";
import type { GetUsageResponse, RecordUsageResponse, UsageServiceClient } from "@platform/proto/notify/v1/usage";
import type { CreateTenantResponse, SetUsageLimitsResponse } from "@platform/proto/notify/v1";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { thresholdEventId } from "../src/domain/usage-month.js";
import { unary, startUsageHarness, type UsageHarness } from "./usage-harness.js";

interface Delivered {
  id: string;
  type: string;
  data: { object: Record<string, unknown> };
}

describe("usage caps and usage.threshold_crossed (in-process notify, real Postgres, NATS and webhooks)", () => {
  let h: UsageHarness;

  beforeAll(async () => {
    h = await startUsageHarness("usage", new Date("2026-10-31T22:00:00Z"));
  }, 120_000);
  afterAll(async () => {
    await h?.stop();
  });

  const createTenant = (id: string) =>
    unary<CreateTenantResponse>((cb) => h.tenants.createTenant({ id, name: id, plan: 1 }, cb));
  const setLimits = (tenantId: string, softCap: number, hardCap: number, key: string, expectedVersion?: number) =>
    unary<SetUsageLimitsResponse>((cb) =>
      h.tenants.setUsageLimits(
        {
          tenantId,
          softCap: String(softCap),
          hardCap: String(hardCap),
          idempotencyKey: key,
          ...(expectedVersion === undefined ? {} : { expectedVersion: String(expectedVersion) }),
        },
        cb,
      ),
    );
  const record = (client: UsageServiceClient, tenantId: string, tokens: number) =>
    unary<RecordUsageResponse>((cb) =>
      client.recordUsage(
        {
          tenantId,
          tokens: String(tokens),
          recordId: "",
        },
        cb,
      ),
    );
  const getUsage = (tenantId: string) => unary<GetUsageResponse>((cb) => h.usage.getUsage({ tenantId }, cb));

  /** How a call failed: gRPC status, the error-code metadata and the message. */
  async function failure(promise: Promise<unknown>) {
    try {
      await promise;
    } catch (error) {
      const e = error as ServiceError;
      return { code: e.code, errorCode: e.metadata.get("error-code")[0], details: e.details };
    }
    throw new Error("the call succeeded");
  }

  /**
   * Waits until every event of the tenant is out of notify's outbox and every delivery the webhooks
   * service made of them has succeeded: nothing is left that could still arrive.
   */
  async function drained(tenantId: string, receiver: TestReceiver, expected: number): Promise<void> {
    await eventually(`${expected} deliveries of ${tenantId}, outbox drained`, async () => {
      const unpublished = await h.notifyDb("outbox").whereNull("published_at").count<{ count: string }[]>("* as count");
      if (Number(unpublished[0]!.count) !== 0) return false;
      const outboxed = await h.notifyDb("outbox").count<{ count: string }[]>("* as count");
      const deliveries = await h
        .webhooksDb("deliveries")
        .join("events", "events.id", "deliveries.event_id")
        .where("events.tenant_id", tenantId)
        .select<{ status: string }[]>("deliveries.status");
      const fannedOut = await h.webhooksDb("events").count<{ count: string }[]>("* as count");
      return (
        Number(outboxed[0]!.count) === Number(fannedOut[0]!.count) &&
        deliveries.length >= expected &&
        deliveries.every((d) => d.status === "succeeded") &&
        receiver.requests.length >= expected
      );
    });
  }

  function verified(receiver: TestReceiver, secret: string): Delivered[] {
    return receiver.requests.map(
      (request) =>
        verifyWebhook<Delivered>({
          payload: request.body,
          header: String(request.headers["service-signature"]),
          secrets: secret,
        }) as unknown as Delivered,
    );
  }

  it("50 concurrent clients across both caps and a month boundary: exactly one event per cap per month", async () => {
    const tenant = "acme";
    await createTenant(tenant);
    const { receiver, secret } = await h.subscribe(tenant);
    expect((await setLimits(tenant, 1000, 2000, "limits-acme-1", 0)).limits?.version).toBe("1");

    const clients = Array.from({ length: 50 }, () => h.newUsageClient());
    // Every client records 2 x 25 tokens concurrently: 2500 tokens, past both caps, in month M.
    const round = () =>
      Promise.all(clients.flatMap((client) => [record(client, tenant, 25), record(client, tenant, 25)]));

    const october = await round();
    expect(october.every((r) => r.usage?.month === "2026-10")).toBe(true);
    // Month M+1: the clock moves past midnight UTC of 1 November.
    h.now.value = new Date("2026-11-01T00:00:05Z");
    const november = await round();
    expect(november.every((r) => r.usage?.month === "2026-11")).toBe(true);

    await drained(tenant, receiver, 4);
    const events = verified(receiver, secret);
    expect(events).toHaveLength(4);
    expect(new Set(events.map((e) => e.id)).size).toBe(4);
    expect(events.every((e) => e.type === "usage.threshold_crossed")).toBe(true);
    const byKey = new Map(events.map((e) => [`${String(e.data.object.month)}/${String(e.data.object.threshold)}`, e]));
    expect([...byKey.keys()].sort()).toEqual([
      "2026-10/hard_cap",
      "2026-10/soft_cap",
      "2026-11/hard_cap",
      "2026-11/soft_cap",
    ]);
    for (const [key, event] of byKey) {
      const [month, threshold] = key.split("/") as [string, "soft_cap" | "hard_cap"];
      const cap = threshold === "soft_cap" ? 1000 : 2000;
      const object = event.data.object;
      expect(Object.keys(object).sort()).toEqual(["cap", "crossed_at", "month", "threshold", "tokens_used", "unit"]);
      expect(object).toMatchObject({ threshold, unit: "tokens", month, cap });
      // Records of 25 tokens: the record that reached the cap left the total at exactly the cap.
      expect(object.tokens_used).toBe(cap);
      expect(String(object.crossed_at).slice(0, 7)).toBe(month);
      expect(event.id).toBe(thresholdEventId(tenant, month, threshold));
    }

    // GetUsage (the current month, November) shows both crossings with their event ids.
    const usage = (await getUsage(tenant)).usage!;
    expect(usage).toMatchObject({ tenantId: tenant, month: "2026-11", tokensUsed: "2500" });
    expect(usage.limits).toMatchObject({ softCap: "1000", hardCap: "2000", version: "1" });
    expect(usage.crossed.map((c) => [c.threshold, c.cap, c.tokensUsed, c.eventId])).toEqual([
      ["soft_cap", "1000", "1000", thresholdEventId(tenant, "2026-11", "soft_cap")],
      ["hard_cap", "2000", "2000", thresholdEventId(tenant, "2026-11", "hard_cap")],
    ]);
    // The outbox holds exactly the four events, all published; nothing more is on its way.
    const outbox = await h.notifyDb("outbox").select<{ event_id: string; published_at: Date | null }[]>("*");
    expect(outbox.filter((row) => events.some((e) => e.id === row.event_id))).toHaveLength(4);
    expect(outbox.every((row) => row.published_at !== null)).toBe(true);
    expect(receiver.requests).toHaveLength(4);
  }, 120_000);

  it("records racing across a month boundary: each month's caps cross once, by that month's own total", async () => {
    const tenant = "umbrella";
    h.now.value = new Date("2027-01-31T23:59:00Z");
    await createTenant(tenant);
    const { receiver, secret } = await h.subscribe(tenant);
    await setLimits(tenant, 600, 1200, "limits-umbrella-1", 0);
    // The clock reads January for the first 70 records it is asked about, February after: the
    // boundary falls in the middle of 50 clients' concurrent records (2 x 10 tokens each, 100 records).
    let reads = 0;
    h.now.read = () => new Date(++reads <= 70 ? "2027-01-31T23:59:59Z" : "2027-02-01T00:00:00Z");
    const clients = Array.from({ length: 50 }, () => h.newUsageClient());
    try {
      const answers = await Promise.all(
        clients.flatMap((client) => [record(client, tenant, 10), record(client, tenant, 10)]),
      );
      expect(answers.filter((a) => a.usage?.month === "2027-01")).toHaveLength(70);
    } finally {
      h.now.read = undefined;
    }
    // January: 700 tokens (soft cap only); February: 300 tokens (nothing).
    const expected = [["2027-01", "soft_cap", 600, 600]];
    await drained(tenant, receiver, expected.length);
    const events = verified(receiver, secret);
    expect(
      events.map((e) => [e.data.object.month, e.data.object.threshold, e.data.object.cap, e.data.object.tokens_used]),
    ).toEqual(expected);
    const months = await h
      .notifyDb("usage_months")
      .where({ tenant_id: tenant })
      .orderBy("month")
      .select<{ month: string; tokens_used: string }[]>("month", "tokens_used");
    expect(months.map((m) => [m.month, Number(m.tokens_used)])).toEqual([
      ["2027-01", 700],
      ["2027-02", 300],
    ]);
  }, 120_000);

  it("lowering a cap below this month's usage emits that cap's one event, and no more that month", async () => {
    const tenant = "globex";
    h.now.value = new Date("2026-11-10T12:00:00Z");
    await createTenant(tenant);
    const { receiver, secret } = await h.subscribe(tenant);
    await setLimits(tenant, 1000, 2000, "limits-globex-1");
    await record(h.usage, tenant, 1500); // soft cap crossed by usage
    h.now.value = new Date("2026-11-10T12:05:00Z");
    // The hard cap lowered below the 1500 used: crossed now, by the change.
    const lowered = await setLimits(tenant, 1000, 1200, "limits-globex-2", 1);
    expect(lowered.limits?.version).toBe("2");
    // Lowered again, raised and lowered, the soft cap lowered too: nothing more this month.
    await setLimits(tenant, 1000, 1100, "limits-globex-3", 2);
    await setLimits(tenant, 1000, 5000, "limits-globex-4", 3);
    await setLimits(tenant, 500, 1300, "limits-globex-5", 4);
    await record(h.usage, tenant, 10);

    await drained(tenant, receiver, 2);
    const events = verified(receiver, secret);
    expect(events.map((e) => [e.data.object.threshold, e.data.object.cap, e.data.object.tokens_used])).toEqual(
      expect.arrayContaining([
        ["soft_cap", 1000, 1500],
        ["hard_cap", 1200, 1500],
      ]),
    );
    expect(events).toHaveLength(2);
    const hard = events.find((e) => e.data.object.threshold === "hard_cap")!;
    expect(hard.data.object.crossed_at).toBe("2026-11-10T12:05:00.000Z");
    const outboxed = await h
      .notifyDb("outbox")
      .whereIn("event_id", [
        thresholdEventId(tenant, "2026-11", "soft_cap"),
        thresholdEventId(tenant, "2026-11", "hard_cap"),
      ])
      .count<{ count: string }[]>("* as count");
    expect(Number(outboxed[0]!.count)).toBe(2);
    // Nothing else of the tenant's is in the outbox: no event for the later changes.
    const ofTenant = await h
      .notifyDb("outbox")
      .where("subject", "like", `%events.${tenant}.%`)
      .count<{ count: string }[]>("* as count");
    expect(ofTenant).toEqual([{ count: "2" }]);
    // Next month a lowered cap may cross again (once).
    h.now.value = new Date("2026-12-01T00:00:01Z");
    await record(h.usage, tenant, 400);
    // Soft above hard is refused: the limits are not changed and nothing is crossed.
    expect(await failure(setLimits(tenant, 500, 300, "limits-globex-6", 5))).toEqual({
      code: 3,
      errorCode: "usage.limits_invalid",
      details: "softCap must not be greater than hardCap",
    });
    await setLimits(tenant, 300, 350, "limits-globex-7", 5);
    await drained(tenant, receiver, 4);
    expect(receiver.requests).toHaveLength(4);
  }, 120_000);

  it("a stale expectedVersion is refused with usage.version_mismatch; a repeated record id counts once", async () => {
    const tenant = "initech";
    await createTenant(tenant);
    expect(await failure(setLimits(tenant, 10, 20, "limits-initech-1", 3))).toEqual({
      code: 9,
      errorCode: "usage.version_mismatch",
      details: "the usage limits are at version 0, not 3",
    });
    await setLimits(tenant, 10, 20, "limits-initech-2", 0);
    expect(await failure(setLimits(tenant, 10, 20, "limits-initech-3", 0))).toMatchObject({
      errorCode: "usage.version_mismatch",
    });
    expect((await setLimits(tenant, 10, 30, "limits-initech-4", 1)).limits?.version).toBe("2");
    const first = await unary<RecordUsageResponse>((cb) =>
      h.usage.recordUsage(
        {
          tenantId: tenant,
          tokens: "7",
          recordId: "run-1",
        },
        cb,
      ),
    );
    const again = await unary<RecordUsageResponse>((cb) =>
      h.usage.recordUsage(
        {
          tenantId: tenant,
          tokens: "7",
          recordId: "run-1",
        },
        cb,
      ),
    );
    expect([first.replayed, again.replayed]).toEqual([false, true]);
    expect(again.usage?.tokensUsed).toBe("7");
    expect(await failure(record(h.usage, tenant, 0))).toMatchObject({ code: 3, errorCode: "usage.record_invalid" });
    expect(await failure(record(h.usage, "nobody", 5))).toMatchObject({ code: 5, errorCode: "tenant.not_found" });
  });
});

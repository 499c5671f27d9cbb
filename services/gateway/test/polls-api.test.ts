import { randomBytes } from "node:crypto";
import {
  createTestCertificates,
  eventually,
  startReceiver,
  type TestCertificates,
  type TestReceiver,
} from "@platform/local-stack/https-receiver";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { OpenApiContract } from "./openapi-contract.js";
import { startTestStack, type TestStack } from "./stack.js";
import { tenantApiCall } from "./tenant-api-call.js";

type Item = Record<string, unknown>;

/**
 * The poll reads end to end (issue 10 items 3 and 4): gateway, notify (projector), webhooks
 * (fan-out, deliveries to an HTTPS receiver) as processes over a scratch database and a NATS
 * namespace. Every answer is checked against /api/v1/openapi.json.
 */
describe("the poll reads: work, attention, activity", () => {
  let certs: TestCertificates;
  let receiver: TestReceiver;
  let failing: TestReceiver;
  let stack: TestStack;
  let contract: OpenApiContract;
  let tenant: string;
  let outsider: string;
  let endpointId: string;
  let n = 0;
  const keys: Record<string, string> = {};
  const marker = `TRANSCRIPT-MARKER-${randomBytes(6).toString("hex")}`;
  const to = "+447700900456";

  const call = tenantApiCall({
    gatewayUrl: () => stack.url,
    defaultKey: () => keys.read!,
    contract: () => contract,
  });
  const uniqueKey = (label: string) => `${label}-${Date.now()}-${n++}`;
  const base = (tenantId = tenant) => `/api/v1/tenants/${tenantId}`;
  const post = (path: string, body: unknown) =>
    call("POST", path, {
      key: keys.full,
      headers: { "content-type": "application/json", "idempotency-key": uniqueKey("k") },
      body: JSON.stringify(body),
    });

  /** Every page of a poll read, following nextCursor. */
  async function allPages(poll: "work" | "attention" | "activity", limit = 2): Promise<Item[]> {
    const items: Item[] = [];
    let cursor: string | null = null;
    do {
      const query: string = `?limit=${limit}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ""}`;
      const { res, body } = await call("GET", `${base()}/${poll}${query}`);
      expect(res.status).toBe(200);
      items.push(...(body.data as Item[]));
      cursor = body.nextCursor as string | null;
    } while (cursor);
    return items;
  }
  const snapshot = async () => ({
    work: await allPages("work"),
    attention: await allPages("attention"),
    activity: await allPages("activity"),
  });
  const activityIds = async () => (await allPages("activity", 100)).map((item) => item.eventId as string);

  const emit = async (type: string, data: Record<string, unknown>, id?: string) =>
    (await stack.admin(
      "event",
      "emit",
      "--tenant",
      tenant,
      "--type",
      type,
      "--data",
      JSON.stringify(data),
      ...(id ? ["--id", id] : []),
    )) as { id: string; duplicate: boolean };
  const deliveredIds = (r: TestReceiver) =>
    r.requests.map((request) => (JSON.parse(request.body.toString("utf8")) as { id: string }).id);
  const sendNotification = (clientName = "Ana") =>
    post(`${base()}/notifications`, {
      to,
      type: "no_show",
      clientName,
      serviceName: "grooming",
      actor: { actorReference: "crm-user-7", delegationReference: null },
    });

  beforeAll(async () => {
    certs = await createTestCertificates();
    receiver = await startReceiver(certs);
    failing = await startReceiver(certs, () => ({ status: 500, body: "down" }));
    stack = await startTestStack(
      {},
      {},
      {
        NODE_EXTRA_CA_CERTS: certs.caPath,
        WEBHOOKS_RETRY_DELAYS: "50ms,50ms,50ms,50ms,50ms,50ms,50ms",
      },
    );
    contract = new OpenApiContract(
      (await (await fetch(`${stack.url}/api/v1/openapi.json`)).json()) as ConstructorParameters<
        typeof OpenApiContract
      >[0],
    );
    tenant = (await stack.admin("tenant", "create", "--name", "Polls")).id as string;
    outsider = (await stack.admin("tenant", "create", "--name", "Outsider")).id as string;
    await stack.admin("tenant", "activate", "--id", tenant);
    keys.read = (await stack.admin("key", "create", "--scopes", "tenant:read", "--tenants", tenant)).key as string;
    keys.full = (
      await stack.admin(
        "key",
        "create",
        "--scopes",
        "notification:send,tenant:read,webhook:manage",
        "--tenants",
        tenant,
      )
    ).key as string;
    keys.sendOnly = (await stack.admin("key", "create", "--scopes", "notification:send", "--tenants", tenant))
      .key as string;
    const created = await post(`${base()}/webhooks`, {
      url: receiver.url,
      description: "polls receiver",
      eventTypes: ["conversation.*", "booking.*", "escalation.*"],
    });
    expect(created.res.status).toBe(201);
    endpointId = created.body.id as string;
  }, 120_000);
  afterAll(async () => {
    await stack?.stop();
    await receiver?.close();
    await failing?.close();
    await certs?.remove();
  });

  it("delivers platform events to the subscribed endpoint and lists them once, also when republished", async () => {
    const suffix = randomBytes(10).toString("hex");
    const events = [
      ["conversation.started", { conversation_id: "conv_1", channel: "whatsapp" }],
      ["booking.created", { booking_id: "bkg_1" }],
      ["booking.cancelled", { booking_id: "bkg_1" }],
      ["escalation.raised", { escalation_id: "esc_1", reason_code: "escalation.customer_requested_human" }],
    ] as const;
    const ids = events.map((_, i) => `evt_${suffix}${String(i).padStart(4, "0")}`);
    for (const [i, [type, data]] of events.entries()) await emit(type, data, ids[i]);
    await eventually("four deliveries", () => ids.every((id) => deliveredIds(receiver).includes(id)));
    await eventually("four activity items", async () => {
      const listed = await activityIds();
      return ids.every((id) => listed.includes(id));
    });
    const attention = await allPages("attention");
    expect(attention).toContainEqual({
      id: "escalation:esc_1",
      kind: "escalation",
      subjectId: "esc_1",
      reasonCode: "escalation.customer_requested_human",
      cause: null,
      openedAt: expect.any(String) as string,
      eventId: ids[3],
    });

    // The same occurrences again, then a new one: once it is through, the repeats were not.
    for (const [i, [type, data]] of events.entries()) await emit(type, data, ids[i]);
    const resolved = await emit("escalation.resolved", { escalation_id: "esc_1" });
    await eventually("the resolution delivered", () => deliveredIds(receiver).includes(resolved.id));
    await eventually("the resolution projected", async () => (await activityIds()).includes(resolved.id));
    for (const id of ids) {
      expect(deliveredIds(receiver).filter((delivered) => delivered === id)).toHaveLength(1);
      expect((await activityIds()).filter((listed) => listed === id)).toHaveLength(1);
    }
    expect((await allPages("attention")).some((item) => item.id === "escalation:esc_1")).toBe(false);
    const activity = await allPages("activity", 100);
    expect(activity.find((item) => item.eventId === ids[1])).toEqual({
      eventId: ids[1],
      type: "booking.created",
      occurredAt: expect.any(String) as string,
      subjectKind: "booking",
      subjectId: "bkg_1",
      reasonCode: null,
      state: null,
      actor: null,
    });
  });

  it("lists notification commands in the work ledger, and the marker of their text in no envelope, ledger or poll", async () => {
    const sent = await sendNotification(`Ana ${marker}`);
    expect(sent.res.status).toBe(200);
    const notificationId = (sent.body.notificationId ?? sent.body.id) as string;
    const work = await eventually("the command in the work ledger", async () => {
      const items = await allPages("work");
      return items.some((item) => item.notificationId === notificationId) && items;
    });
    expect(work.find((item) => item.notificationId === notificationId)).toEqual({
      notificationId,
      type: "no_show",
      state: "sent",
      reasonCode: null,
      createdAt: expect.any(String) as string,
      updatedAt: expect.any(String) as string,
    });
    const emitted = await emit("booking.created", { booking_id: "bkg_marker" });
    await eventually("the booking delivered", () => deliveredIds(receiver).includes(emitted.id));
    await eventually("the booking projected", async () => (await activityIds()).includes(emitted.id));

    // The transcript has it (so this test can fail)...
    const transcript = await call("GET", `${base()}/conversations/${encodeURIComponent(to)}/messages`);
    expect(JSON.stringify(transcript.body)).toContain(marker);
    // ...nothing else does.
    for (const request of [...receiver.requests, ...failing.requests]) {
      expect(request.body.toString("utf8")).not.toContain(marker);
    }
    const deliveries = await call("GET", `${base()}/webhooks/${endpointId}/deliveries?limit=100`, { key: keys.full });
    expect(deliveries.res.status).toBe(200);
    for (const delivery of deliveries.body.data as Item[]) {
      const one = await call("GET", `${base()}/webhooks/${endpointId}/deliveries/${delivery.id as string}`, {
        key: keys.full,
      });
      expect(one.res.status).toBe(200);
      expect(JSON.stringify(one.body)).not.toContain(marker);
    }
    for (const poll of ["work", "attention", "activity"] as const) {
      for (const limit of [1, 100]) expect(JSON.stringify(await allPages(poll, limit))).not.toContain(marker);
    }
  });

  it("pages every item once, newest first, while new items arrive", async () => {
    for (let i = 0; i < 3; i++) await sendNotification();
    const before = await eventually("at least 8 activity items", async () => {
      const ids = await activityIds();
      return ids.length >= 8 && ids;
    });
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const query: string = `?limit=3${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ""}`;
      const { body } = await call("GET", `${base()}/activity${query}`);
      seen.push(...(body.data as Item[]).map((item) => item.eventId as string));
      cursor = body.nextCursor as string | null;
      // An insert between pages lands on top, never in a later page.
      await emit("booking.created", { booking_id: `bkg_page_${n++}` });
    } while (cursor);
    expect(new Set(seen).size).toBe(seen.length);
    expect(seen.filter((id) => before.includes(id))).toEqual(before);
    // Newest first: the last insert (the stream's latest event) heads the list once projected.
    const latest = await emit("booking.created", { booking_id: "bkg_latest" });
    await eventually("the latest event on top", async () => (await activityIds())[0] === latest.id);
  });

  it("answers If-None-Match with 304 and no body while nothing changed; a new event changes the ETag", async () => {
    for (const poll of ["work", "attention", "activity"] as const) {
      const first = await call("GET", `${base()}/${poll}?limit=5`);
      const etag = first.res.headers.get("etag")!;
      expect(etag).toMatch(/^"[A-Za-z0-9_-]{32}"$/);
      const again = await call("GET", `${base()}/${poll}?limit=5`, { headers: { "if-none-match": etag } });
      expect(again.res.status).toBe(304);
      expect(again.res.headers.get("etag")).toBe(etag);
      expect(await again.res.text()).toBe("");
      const weak = await call("GET", `${base()}/${poll}?limit=5`, { headers: { "if-none-match": `"x", W/${etag}` } });
      expect(weak.res.status).toBe(304);
    }
    const first = await call("GET", `${base()}/activity`);
    const etag = first.res.headers.get("etag")!;
    await emit("conversation.started", { conversation_id: "conv_etag", channel: "whatsapp" });
    const changed = await eventually("a new ETag", async () => {
      const answer = await call("GET", `${base()}/activity`, { headers: { "if-none-match": etag } });
      return answer.res.status === 200 && answer;
    });
    expect(changed.res.headers.get("etag")).not.toBe(etag);
    expect((changed.body.data as Item[])[0]).toMatchObject({ type: "conversation.started", subjectId: "conv_etag" });
  });

  it("needs tenant:read and the tenant grant; refuses a bad limit or cursor", async () => {
    for (const poll of ["work", "attention", "activity"]) {
      const noScope = await call("GET", `${base()}/${poll}`, { key: keys.sendOnly });
      expect([noScope.res.status, noScope.body.code]).toEqual([403, "auth.scope_missing"]);
      const notGranted = await call("GET", `${base(outsider)}/${poll}`);
      expect([notGranted.res.status, notGranted.body.code]).toEqual([404, "tenant.not_found"]);
      for (const query of ["?limit=0", "?limit=101", "?limit=x", "?cursor=not-ours", "?limit=1&limit=2"]) {
        const bad = await call("GET", `${base()}/${poll}${query}`);
        expect([query, bad.res.status, bad.body.code]).toEqual([query, 400, "request.invalid"]);
      }
    }
  });

  it("opens attention for a dead-lettered endpoint until it is resumed, and rebuilds every projection to the same content", async () => {
    const created = await post(`${base()}/webhooks`, {
      url: failing.url,
      description: "failing receiver",
      eventTypes: ["booking.created"],
    });
    const failingId = created.body.id as string;
    await emit("booking.created", { booking_id: "bkg_dead" });
    const item = await eventually("the dead-letter attention item", async () =>
      (await allPages("attention")).find((open) => open.subjectId === failingId),
    );
    expect(item).toMatchObject({
      id: `webhook_endpoint_dead_lettered:${failingId}`,
      kind: "webhook_endpoint_dead_lettered",
      reasonCode: "webhook.endpoint_dead_lettered",
      // The error class of the dead-lettered delivery's last attempt (the receiver answered 500).
      cause: "http_5xx",
    });
    failing.answer(() => ({ status: 200, body: "ok" }));
    const resumed = await post(`${base()}/webhooks/${failingId}/resume`, {});
    expect(resumed.res.status).toBe(200);
    await eventually("the attention item closed", async () =>
      (await allPages("attention")).every((open) => open.subjectId !== failingId),
    );
    const activity = await allPages("activity", 100);
    expect(activity.slice(0, 2).map((entry) => [entry.type, entry.subjectId])).toEqual([
      ["webhook.endpoint_resumed", failingId],
      ["webhook.endpoint_dead_lettered", failingId],
    ]);
    expect(activity.find((entry) => entry.type === "webhook.endpoint_created")).toMatchObject({
      subjectKind: "webhook_endpoint",
      subjectId: failingId,
      // An API call names its key (by id) as the actor.
      actor: expect.stringMatching(/^api_key:key_[0-9a-f]{24}$/) as string,
    });

    // The fan-out ignored the internal facts (no event row, no delivery) but removed webhooks' own
    // outbox rows of them; notify's projector removed notify's.
    const db = new pg.Client({ connectionString: stack.scratch.url });
    await db.connect();
    try {
      const internal = await db.query(
        "select count(*)::int as n from webhooks_history.events where type like 'notification.%' or type like 'webhook.%'",
      );
      expect(internal.rows[0]).toEqual({ n: 0 });
      await eventually("both outboxes emptied by their consumers", async () => {
        const left = await db.query(
          "select (select count(*) from webhooks.outbox)::int + (select count(*) from notify.outbox)::int as n",
        );
        return (left.rows[0] as { n: number }).n === 0;
      });
    } finally {
      await db.end();
    }

    const before = await snapshot();
    expect(before.work.length).toBeGreaterThan(3);
    const rebuilt = await stack.admin("projection", "rebuild");
    expect(rebuilt.eventsApplied).toBeGreaterThanOrEqual(before.activity.length);
    expect(await snapshot()).toEqual(before);
  });
});

/**
 * The SDK against a scripted fetch: what it sends (Idempotency-Key, If-None-Match, cursors), how
 * it waits (the waits are recorded, not slept) and what it throws.
 */
import { createHmac } from "node:crypto";
import { describe, expect, it } from "vitest";
import {
  ApiError,
  createClient,
  isApiError,
  NetworkError,
  OutcomeUnknownError,
  problemCodes,
  retryAfterSeconds,
  WebhookVerificationError,
  type CatalogPaths,
  type ClientOptions,
  type Operation,
  type PagedPaths,
  type PathsWith,
  type PollablePaths,
  type QueryParams,
  type TenantPaths,
} from "../src/index.js";

interface Sent {
  method: string;
  url: string;
  headers: Record<string, string>;
  body: string | undefined;
}

type Script = (request: Sent, index: number) => Response | Error;

const json = (status: number, body: unknown, headers: Record<string, string> = {}) =>
  new Response(JSON.stringify(body), {
    status,
    headers: { "content-type": status >= 400 ? "application/problem+json" : "application/json", ...headers },
  });

const problem = (status: number, code: string, headers: Record<string, string> = {}) =>
  json(
    status,
    { type: "about:blank", title: code, status, detail: `detail of ${code}`, code, correlationId: "corr-1" },
    headers,
  );

function harness(script: Script, options: Partial<ClientOptions> = {}) {
  const sent: Sent[] = [];
  const waits: number[] = [];
  const fakeFetch = (input: string | URL | Request, init?: RequestInit): Promise<Response> => {
    const request: Sent = {
      method: init?.method ?? "GET",
      url: input instanceof Request ? input.url : input.toString(),
      headers: Object.fromEntries(Object.entries((init?.headers ?? {}) as Record<string, string>)),
      body: typeof init?.body === "string" ? init.body : undefined,
    };
    sent.push(request);
    const answer = script(request, sent.length - 1);
    return answer instanceof Error ? Promise.reject(answer) : Promise.resolve(answer);
  };
  const client = createClient({
    baseUrl: "http://gateway.test/",
    apiKey: "key_1",
    fetch: fakeFetch,
    sleep: (ms) => {
      waits.push(ms);
      return Promise.resolve();
    },
    random: () => 0.5,
    ...options,
  });
  return { client, sent, waits };
}

const reminder = {
  to: "+447700900123",
  type: "reminder" as const,
  clientName: "Ana",
  businessName: "Paws & Co",
  serviceName: "grooming",
  when: "Mon 3 May 10:00",
  actor: { actorReference: "crm-user-7" },
};
const sentResult = {
  notificationId: "ntf_000000000000000000000001",
  state: "sent",
  type: "reminder",
  createdAt: "2026-11-27T10:00:00.000Z",
  idempotencyStatus: "applied",
};

describe("safe retries", () => {
  it("sends one Idempotency-Key per logical call and reuses it on every retry (503 Retry-After, dropped connection, 500)", async () => {
    const { client, sent, waits } = harness((_request, index) =>
      index === 0
        ? problem(503, "service.unavailable", { "retry-after": "2" })
        : index === 1
          ? new TypeError("fetch failed", { cause: new Error("socket hang up") })
          : index === 2
            ? problem(500, "service.internal_error")
            : json(200, sentResult),
    );
    const answer = await client.tenant.call("post", "/tenants/{tenantId}/notifications", {
      path: { tenantId: "ten_1" },
      body: reminder,
    });
    expect(answer.data.notificationId).toBe(sentResult.notificationId);
    expect(answer.attempts).toBe(4);
    const keys = sent.map((r) => r.headers["idempotency-key"]);
    expect(new Set(keys).size).toBe(1);
    expect(keys[0]).toMatch(/^[A-Za-z0-9_.:-]{8,128}$/);
    expect(answer.idempotencyKey).toBe(keys[0]);
    expect(sent.every((r) => r.url === "http://gateway.test/api/v1/tenants/ten_1/notifications")).toBe(true);
    expect(sent.every((r) => r.body === JSON.stringify(reminder))).toBe(true);
    // Retry-After 2 s exactly; then backoffs of the policy (250 ms doubling, upper half: 0.5 → 3/4).
    expect(waits).toEqual([2000, 375, 750]);
  });

  it("uses the caller's own Idempotency-Key, and a new one for the next logical call", async () => {
    const { client, sent } = harness(() => json(201, { id: 1, name: "Rex", categoryId: 1, status: "available" }));
    await client.catalog.request("post", "/pets", {
      body: { name: "Rex", categoryId: 1 },
      idempotencyKey: "rex-1-abc",
    });
    await client.catalog.request("post", "/pets", { body: { name: "Rex", categoryId: 1 } });
    await client.catalog.request("post", "/pets", { body: { name: "Rex", categoryId: 1 } });
    expect(sent[0]!.headers["idempotency-key"]).toBe("rex-1-abc");
    expect(sent[1]!.headers["idempotency-key"]).not.toBe(sent[2]!.headers["idempotency-key"]);
    expect(sent.map((r) => r.url)).toEqual(Array(3).fill("http://gateway.test/v1/pets"));
  });

  it("honours 429 Retry-After as seconds or an HTTP date, and never sends a key on a read", async () => {
    const { client, sent, waits } = harness((_r, index) =>
      index === 0
        ? problem(429, "request.rate_limited", { "retry-after": "3" })
        : json(200, { id: "ten_1" }, { etag: '"e1"' }),
    );
    await client.tenant.request("get", "/tenants/{tenantId}", { path: { tenantId: "ten_1" } });
    expect(waits).toEqual([3000]);
    expect(sent.every((r) => r.headers["idempotency-key"] === undefined)).toBe(true);
    expect(retryAfterSeconds("Fri, 27 Nov 2026 10:00:07 GMT", Date.parse("2026-11-27T10:00:00Z"))).toBe(7);
    expect(retryAfterSeconds("soon")).toBeUndefined();
  });

  it("resolves 409 idempotency.in_progress and a 504 by asking again with the same key", async () => {
    const { client, sent } = harness((_r, index) =>
      index === 0
        ? problem(409, "idempotency.in_progress")
        : index === 1
          ? json(504, { code: "outcome_unknown", message: "the outcome is unknown", status: 504 })
          : json(201, { id: 7, name: "Rex", categoryId: 1, status: "available" }),
    );
    const pet = await client.catalog.request("post", "/pets", { body: { name: "Rex", categoryId: 1 } });
    expect(pet.id).toBe(7);
    expect(new Set(sent.map((r) => r.headers["idempotency-key"])).size).toBe(1);
    expect(sent).toHaveLength(3);
  });

  it("stops after the budget with the last error, typed, with its advice and correlationId", async () => {
    const { client, sent, waits } = harness(() => problem(503, "service.unavailable"), {
      retry: { maxRetries: 2, baseDelayMs: 100, maxDelayMs: 1000 },
    });
    const error = await client.tenant
      .request("get", "/tenants/{tenantId}/usage", { path: { tenantId: "ten_1" } })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ApiError);
    expect(isApiError(error, "service.unavailable")).toBe(true);
    if (!isApiError(error, "service.unavailable")) return;
    expect(error).toMatchObject({ status: 503, attempts: 3, correlationId: "corr-1" });
    expect(error.advice).toBe(problemCodes["service.unavailable"].advice);
    expect(sent).toHaveLength(3);
    expect(waits).toEqual([75, 150]);
  });

  it("does not wait for a Retry-After longer than its longest wait: it throws at once", async () => {
    const { client, sent, waits } = harness(() =>
      problem(429, "partner.channel_rate_limited", { "retry-after": "120" }),
    );
    const error = await client.tenant
      .request("post", "/tenants/{tenantId}/notifications", { path: { tenantId: "t" }, body: reminder })
      .catch((e: unknown) => e);
    expect(isApiError(error, "partner.channel_rate_limited")).toBe(true);
    expect((error as ApiError).retryAfterSeconds).toBe(120);
    expect(sent).toHaveLength(1);
    expect(waits).toEqual([]);
  });

  it("never retries a refusal (400, 401, 404, 422): the error carries the catalogue's advice", async () => {
    const { client, sent } = harness(() => problem(400, "partner.notification_recipient_invalid"));
    const error = await client.tenant
      .request("post", "/tenants/{tenantId}/notifications", { path: { tenantId: "t" }, body: { ...reminder, to: "x" } })
      .catch((e: unknown) => e);
    expect(sent).toHaveLength(1);
    expect(error).toMatchObject({
      status: 400,
      code: "partner.notification_recipient_invalid",
      correlationId: "corr-1",
      advice: "Fix the number; never retry it as it is.",
      idempotencyKey: sent[0]!.headers["idempotency-key"],
    });
  });

  it("types the catalog's errors by its code and takes the correlationId from X-Request-Id", async () => {
    const { client } = harness(() =>
      json(404, { code: "not_found", message: "pet 9 not found", status: 404 }, { "x-request-id": "req-9" }),
    );
    const error = await client.catalog.request("get", "/pets/{petId}", { path: { petId: 9 } }).catch((e: unknown) => e);
    expect(isApiError(error, "not_found")).toBe(true);
    expect(error).toMatchObject({ status: 404, detail: "pet 9 not found", correlationId: "req-9" });
    expect((error as ApiError).advice).toBe("verify id and grants; no blind retry");
  });

  it("gives up on a dead connection after the budget with a NetworkError naming the key to retry with", async () => {
    const { client, sent } = harness(() => new TypeError("fetch failed"), { retry: { maxRetries: 1 } });
    const error = await client.catalog
      .request("post", "/pets", { body: { name: "Rex", categoryId: 1 } })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(NetworkError);
    expect(error).toMatchObject({ attempts: 2, idempotencyKey: sent[0]!.headers["idempotency-key"] });
    expect((error as NetworkError).message).toBe("POST /v1/pets: no answer after 2 request(s): fetch failed");
  });
});

describe("409 partner.action_outcome_unknown", () => {
  it("is never sent again: the SDK reads the transcript, as docs/errors.md advises, and throws it with the error", async () => {
    const transcript = {
      messages: [{ id: "msg_1", notificationId: sentResult.notificationId, state: "unknown" }],
      nextCursor: null,
    };
    const { client, sent, waits } = harness((request) =>
      request.method === "POST" ? problem(409, "partner.action_outcome_unknown") : json(200, transcript),
    );
    const error = await client.tenant
      .request("post", "/tenants/{tenantId}/notifications", { path: { tenantId: "ten_1" }, body: reminder })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(OutcomeUnknownError);
    const unknown = error as OutcomeUnknownError;
    expect(unknown.code).toBe("partner.action_outcome_unknown");
    expect(unknown.advice).toBe("Check the conversation transcript before acting again.");
    expect(unknown.correlationId).toBe("corr-1");
    expect(unknown.transcript?.map((m) => m.state)).toEqual(["unknown"]);
    expect(sent.map((r) => `${r.method} ${r.url}`)).toEqual([
      "POST http://gateway.test/api/v1/tenants/ten_1/notifications",
      "GET http://gateway.test/api/v1/tenants/ten_1/conversations/%2B447700900123/messages",
    ]);
    expect(waits).toEqual([]);
  });
});

describe("paging and polls", () => {
  it("offers an iterator for every list of both documents that takes a cursor, and a poll for every read that answers 304", () => {
    type CursorPaths<P> = {
      [K in PathsWith<P, "get">]: [QueryParams<Operation<P, K, "get">>] extends [never]
        ? never
        : QueryParams<Operation<P, K, "get">> extends { cursor?: unknown }
          ? K
          : never;
    }[PathsWith<P, "get">];
    type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
    const tenant: Same<CursorPaths<TenantPaths>, PagedPaths<TenantPaths>> = true;
    const catalog: Same<CursorPaths<CatalogPaths>, PagedPaths<CatalogPaths>> = true;
    // The lists issue 35 names, at least.
    const named: Same<
      | "/tenants/{tenantId}/webhooks/{endpointId}/deliveries"
      | "/tenants/{tenantId}/activity"
      | "/tenants/{tenantId}/work"
      | "/tenants/{tenantId}/conversations/{to}/messages"
      | PagedPaths<TenantPaths>,
      PagedPaths<TenantPaths>
    > = true;
    const pets: Same<"/pets", PagedPaths<CatalogPaths>> = true;
    const polls: Same<"/tenants/{tenantId}/activity" | PollablePaths<TenantPaths>, PollablePaths<TenantPaths>> = true;
    expect([tenant, catalog, named, pets, polls]).toEqual([true, true, true, true, true]);
  });

  it("walks a tenant list by nextCursor, passing the query on every page", async () => {
    const { client, sent } = harness((request) => {
      const cursor = new URL(request.url).searchParams.get("cursor");
      return cursor === null
        ? json(200, { data: [{ id: "a" }, { id: "b" }], nextCursor: "c2" })
        : json(200, { data: [{ id: "c" }], nextCursor: null });
    });
    const ids: string[] = [];
    for await (const delivery of client.tenant.items("/tenants/{tenantId}/webhooks/{endpointId}/deliveries", {
      path: { tenantId: "t", endpointId: "ep_1" },
      query: { limit: 2, status: "succeeded" },
    })) {
      ids.push(delivery.id);
    }
    expect(ids).toEqual(["a", "b", "c"]);
    expect(sent.map((r) => new URL(r.url).search)).toEqual([
      "?limit=2&status=succeeded",
      "?limit=2&status=succeeded&cursor=c2",
    ]);
  });

  it("walks the catalog's pets by the Link header's next URL", async () => {
    const { client, sent } = harness((request) =>
      new URL(request.url).searchParams.get("cursor") === null
        ? json(200, [{ id: 1, name: "A", categoryId: 1, status: "available" }], {
            link: '</v1/pets?limit=1&cursor=AbC_1>; rel="next"',
          })
        : json(200, [{ id: 2, name: "B", categoryId: 1, status: "available" }]),
    );
    const names: string[] = [];
    for await (const pet of client.catalog.items("/pets", { query: { limit: 1 } })) names.push(pet.name);
    expect(names).toEqual(["A", "B"]);
    expect(new URL(sent[1]!.url).searchParams.get("cursor")).toBe("AbC_1");
  });

  it("polls with If-None-Match and answers unchanged on 304", async () => {
    const { client, sent } = harness((request) =>
      request.headers["if-none-match"] === '"v1"'
        ? new Response(null, { status: 304, headers: { etag: '"v1"' } })
        : json(200, { data: [], nextCursor: null }, { etag: '"v1"' }),
    );
    const poller = client.tenant.poller("/tenants/{tenantId}/activity", { path: { tenantId: "t" } });
    const first = await poller.next();
    expect(first).toEqual({ unchanged: false, etag: '"v1"', data: { data: [], nextCursor: null } });
    expect(await poller.next()).toEqual({ unchanged: true, etag: '"v1"' });
    expect(sent.map((r) => r.headers["if-none-match"])).toEqual([undefined, '"v1"']);
  });
});

describe("webhooks.verify", () => {
  const secret = "whsec_" + "a".repeat(44);
  const previous = "whsec_" + "b".repeat(44);
  const body = JSON.stringify({
    id: "evt_1",
    type: "booking.created",
    api_version: "2026-11-01",
    occurred_at: "2026-11-27T10:00:00Z",
    tenant: "ten_1",
    livemode: true,
    data: { object: { booking_id: "bk_1" } },
  });
  const now = Date.parse("2026-11-27T10:00:00Z");
  const t = now / 1000;
  const sign = (key: string, at = t) => createHmac("sha256", key).update(`${at}.${body}`).digest("hex");
  const { verify } = harness(() => json(200, {})).client.webhooks;

  it("returns the typed envelope for a genuine delivery, from Node's headers or a fetch Headers", () => {
    const event = verify<{ booking_id: string }>(body, { "service-signature": `t=${t},v1=${sign(secret)}` }, secret, {
      now,
    });
    expect(event.data.object.booking_id).toBe("bk_1");
    expect(event.type).toBe("booking.created");
    const fromHeaders = verify(
      Buffer.from(body),
      new Headers({ "Service-Signature": `t=${t},v1=${sign(secret)}` }),
      secret,
      {
        now,
      },
    );
    expect(fromHeaders.id).toBe("evt_1");
  });

  it("accepts either signature of a rotation's 24 hours", () => {
    const header = `t=${t},v1=${sign(secret)},v1=${sign(previous)}`;
    expect(verify(body, { "service-signature": header }, secret, { now }).id).toBe("evt_1");
    expect(verify(body, { "service-signature": header }, previous, { now }).id).toBe("evt_1");
  });

  it("refuses with the verifier's own errors: wrong secret, 5 minutes off, missing, tampered", () => {
    const refusal = (fn: () => unknown) => {
      try {
        fn();
      } catch (error) {
        expect(error).toBeInstanceOf(WebhookVerificationError);
        return (error as WebhookVerificationError).code;
      }
      throw new Error("verified");
    };
    const header = { "service-signature": `t=${t},v1=${sign(secret)}` };
    expect(refusal(() => verify(body, header, previous, { now }))).toBe("no_matching_signature");
    expect(refusal(() => verify(body, header, secret, { now: now + 301_000 }))).toBe("timestamp_outside_tolerance");
    expect(verify(body, header, secret, { now: now + 300_000 }).id).toBe("evt_1");
    expect(refusal(() => verify(body, {}, secret, { now }))).toBe("header_missing");
    expect(refusal(() => verify(body.replace("bk_1", "bk_2"), header, secret, { now }))).toBe("no_matching_signature");
  });
});

import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { OpenApiContract } from "./openapi-contract.js";
import { startTestStack, type TestStack } from "./stack.js";

/**
 * Thousands of random and malformed requests (methods, paths, ids, queries, headers, bodies,
 * unicode, huge values) against the real gateway. Only documented 4xx (or a success) may come
 * back, each with a valid error body for its surface; never a 5xx, never a hang, never a crash.
 */
describe("bad input", () => {
  let stack: TestStack;
  let key: string;
  let tenant: string;
  let problems: OpenApiContract;
  let errors: OpenApiContract;
  const documented = new Set([200, 201, 204, 400, 401, 403, 404, 405, 409, 413, 415, 422, 429]);

  beforeAll(async () => {
    stack = await startTestStack({ RATE_LIMIT_PER_SECOND: "100000", RATE_LIMIT_BURST: "100000" });
    tenant = (await stack.admin("tenant", "create", "--name", "Fuzz")).id as string;
    key = (
      await stack.admin(
        "key",
        "create",
        "--tenants",
        tenant,
        "--scopes",
        "notification:send,webhook:manage,tenant:read,usage:manage,tenant:manage",
      )
    ).key as string;
    const doc = async (path: string) =>
      (await (await fetch(`${stack.url}${path}`)).json()) as ConstructorParameters<typeof OpenApiContract>[0];
    problems = new OpenApiContract(await doc("/api/v1/openapi.json"));
    errors = new OpenApiContract(await doc("/v1/openapi.json"));
  });
  afterAll(async () => stack?.stop());

  const printable = fc.string({ unit: fc.integer({ min: 0x20, max: 0x7e }).map((c) => String.fromCharCode(c)) });
  const weird = fc.oneof(
    fc.string({ unit: "grapheme", maxLength: 40 }),
    fc.string({ unit: "binary", maxLength: 40 }),
    fc.constantFrom("", " ", "%", "%00", "%E0%A4%A", "..", "../..", "null", "-1", "1e309", "9".repeat(40), "😀"),
    fc.bigInt({ min: -(2n ** 70n), max: 2n ** 70n }).map(String),
  );
  const segment = weird.map((s) => (/%|\.\./.test(s) ? s : encodeURIComponent(s)));
  const tenantId = fc.oneof(fc.constant("TENANT"), segment);
  const path = fc.oneof(
    fc.constant("/v1/pets"),
    segment.map((id) => `/v1/pets/${id}`),
    tenantId.map((t) => `/api/v1/tenants/${t}`),
    tenantId.map((t) => `/api/v1/tenants/${t}/usage/limits`),
    fc.array(segment, { maxLength: 5 }).map((s) => `/api/v1/${s.join("/")}`),
    fc.array(segment, { maxLength: 5 }).map((s) => `/v1/${s.join("/")}`),
    fc.array(segment, { maxLength: 3 }).map((s) => `/${s.join("/")}`),
  );
  const query = fc.oneof(
    fc.constant(""),
    fc
      .array(fc.tuple(fc.constantFrom("limit", "status", "cursor", "x", ""), segment), { maxLength: 4 })
      .map((pairs) => `?${pairs.map(([k, v]) => `${k}=${v}`).join("&")}`),
  );
  const json = fc.oneof(
    fc.jsonValue().map((v) => JSON.stringify(v)),
    fc
      .record({ name: fc.jsonValue(), categoryId: fc.jsonValue(), status: fc.jsonValue() })
      .map((v) => JSON.stringify(v)),
    fc.record({ softCap: fc.jsonValue(), hardCap: fc.jsonValue() }).map((v) => JSON.stringify(v)),
    fc
      .record({ softCap: fc.integer({ min: -5, max: 1e6 }), hardCap: fc.integer({ min: -5, max: 1e6 }) })
      .map((v) => JSON.stringify(v)),
    fc.string({ unit: "binary", maxLength: 200 }),
    fc.constant("{".repeat(5000)),
  );
  const request = fc.record({
    method: fc.constantFrom("GET", "POST", "PUT", "PATCH", "DELETE", "OPTIONS", "HEAD"),
    path,
    query,
    auth: fc.oneof(
      fc.constant("KEY"),
      fc.constant(undefined),
      printable.map((s) => `Bearer ${s}`),
      printable,
      fc.constant(`Bearer sk_live_${"0".repeat(24)}_${"A".repeat(43)}`),
    ),
    contentType: fc.option(
      fc.oneof(fc.constantFrom("application/json", "application/json; charset=utf-16", "text/plain"), printable),
    ),
    idempotencyKey: fc.option(
      fc.oneof(
        printable,
        fc.string({ minLength: 8, maxLength: 20 }).map((s) => `"${s}"`),
      ),
    ),
    requestId: fc.option(printable),
    body: fc.option(json),
  });

  it("answers only documented 4xx with a valid error body, never a 5xx, a hang or a crash", async () => {
    const seen = new Map<number, number>();
    await fc.assert(
      fc.asyncProperty(request, async (r) => {
        const headers = new Headers();
        if (r.auth !== undefined) headers.set("authorization", r.auth === "KEY" ? `Bearer ${key}` : r.auth);
        if (r.contentType !== null) headers.set("content-type", r.contentType);
        if (r.idempotencyKey !== null) headers.set("idempotency-key", r.idempotencyKey);
        if (r.requestId !== null) headers.set("x-request-id", r.requestId);
        const target = `${r.path.replaceAll("TENANT", tenant)}${r.query}`;
        const withBody = r.body !== null && r.method !== "GET" && r.method !== "HEAD";
        const res = await fetch(`${stack.url}${target}`, {
          method: r.method,
          headers,
          body: withBody ? r.body : undefined,
          signal: AbortSignal.timeout(5_000),
        });
        const text = await res.text();
        seen.set(res.status, (seen.get(res.status) ?? 0) + 1);
        expect(documented.has(res.status), `${r.method} ${target} -> ${res.status} ${text}`).toBe(true);
        expect(res.headers.get("x-request-id")).toMatch(/^[A-Za-z0-9._:-]{1,128}$/);
        if (res.status >= 400 && r.method !== "HEAD") {
          const body: unknown = JSON.parse(text);
          const pathOnly = new URL(`${stack.url}${target}`).pathname;
          if (pathOnly === "/api" || pathOnly.startsWith("/api/")) {
            expect(res.headers.get("content-type")).toMatch(/^application\/problem\+json/);
            problems.check(r.method, pathOnly, res, body, "Problem");
          } else {
            errors.check(r.method, pathOnly, res, body, "Error");
          }
        }
      }),
      { numRuns: 2_000, interruptAfterTimeLimit: 90_000 },
    );
    expect(stack.gateway.child.exitCode).toBeNull();
    expect((await fetch(`${stack.url}/healthz`)).status).toBe(200);
    // The run reached deep paths, not only the front door.
    expect([...seen.keys()]).toEqual(expect.arrayContaining([200, 400, 401, 404]));
  }, 120_000);
});

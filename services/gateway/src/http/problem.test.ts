import type { Context } from "koa";
import pino from "pino";
import { Registry } from "prom-client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { serveApp } from "../serve-app.testing.js";
import { codeEntry } from "@platform/codes";
import { issueApiKey, type ApiKeyRecord } from "../domain/api-key.js";
import type { CatalogClient } from "../grpc/catalog-client.js";
import { ApiError } from "./api-error.js";
import { createGatewayApp } from "../app.js";
import { problemCodeFor, problemCodes, writeProblem } from "./problem.js";
import { TokenBuckets } from "../domain/token-buckets.js";

const fakeContext = () => ({ state: { requestId: "req_1" } }) as unknown as Context & { body: { code: string } };

describe("writeProblem: the code is always a catalogue problem code", () => {
  it("writes a catalogued problem code as it is, reporting nothing", () => {
    const reported: string[] = [];
    const ctx = fakeContext();
    writeProblem(ctx, new ApiError(412, "changed", { code: "webhook.version_mismatch" }), undefined, (code) =>
      reported.push(code),
    );
    expect(ctx.body).toMatchObject({ code: "webhook.version_mismatch", status: 412 });
    expect(reported).toEqual([]);
  });

  it("reports an internal or unknown code and answers with the status's default code", () => {
    const reported: [string, number][] = [];
    const report = (code: string, status: number) => reported.push([code, status]);
    // Catalogued, but internal (a sub-problem of webhook.endpoint_invalid): never a problem code.
    expect(codeEntry("webhook.url_not_https")?.usedAs).toEqual(["internal"]);
    const ctx = fakeContext();
    writeProblem(ctx, new ApiError(400, "url must use https", { code: "webhook.url_not_https" }), undefined, report);
    expect(ctx.body).toMatchObject({ code: "request.invalid", status: 400, detail: "url must use https" });
    expect(problemCodeFor(new ApiError(409, "?", { code: "tenant.made_up" }), report)).toBe("service.internal_error");
    expect(reported).toEqual([
      ["webhook.url_not_https", 400],
      ["tenant.made_up", 409],
    ]);
  });

  it("does not report an error without a code of its own", () => {
    const reported: string[] = [];
    expect(problemCodeFor(new ApiError(404, "no such resource"), (code) => reported.push(code))).toBe(
      "request.route_not_found",
    );
    expect(reported).toEqual([]);
  });

  it("every problem code is a catalogue entry used as a problem, with a status", () => {
    for (const [code, entry] of Object.entries(problemCodes)) {
      expect(codeEntry(code)?.usedAs, code).toContain("problem");
      expect(entry.status, code).toBeGreaterThanOrEqual(400);
    }
  });
});

describe("the gateway app on an uncatalogued code from a service", () => {
  const registry = new Registry();
  const logged: { code?: string; msg?: string; level?: number }[] = [];
  const issued = issueApiKey();
  const record: ApiKeyRecord = {
    id: issued.id,
    name: "test",
    digest: issued.digest,
    scopes: ["webhook:manage"],
    tenantIds: ["t1"],
    revoked: false,
  };
  const grpcFailure = Object.assign(new Error("3 INVALID_ARGUMENT: url must use https"), {
    code: 3,
    details: "url must use https",
    metadata: { get: (key: string) => (key === "error-code" ? ["webhook.url_not_https"] : []) },
  });
  /** Every call fails as a service answering an internal code would. */
  const failingClient = new Proxy({}, { get: () => () => Promise.reject(grpcFailure) }) as never;
  let served: Awaited<ReturnType<typeof serveApp>>;
  let base: string;

  beforeAll(async () => {
    const app = createGatewayApp({
      catalog: {} as CatalogClient,
      notify: failingClient,
      webhooks: failingClient,
      projections: failingClient,
      rateLimits: new TokenBuckets({ ratePerSecond: 1000, burst: 1000 }),
      problemBaseUri: undefined,
      apiKeys: { find: (id) => Promise.resolve(id === record.id ? record : undefined) },
      logger: pino({ level: "info" }, { write: (line: string) => void logged.push(JSON.parse(line) as never) }),
      registry,
      readiness: () => ({ ready: true, checks: {} }),
      publicBaseUrl: "",
    });
    served = await serveApp(app);
    base = served.base;
  });

  afterAll(() => served.close());

  it("answers the status's default code, logs the code as an error and counts it", async () => {
    const response = await fetch(`${base}/api/v1/tenants/t1/webhooks/event-types`, {
      headers: { authorization: `Bearer ${issued.key}` },
    });
    expect(response.status).toBe(400);
    expect(await response.json()).toMatchObject({ code: "request.invalid", detail: "url must use https" });
    const counted = await registry.getSingleMetric("gateway_problem_code_uncatalogued_total")?.get();
    expect(counted?.values[0]?.value).toBe(1);
    expect(logged).toContainEqual(
      expect.objectContaining({
        level: 50,
        code: "webhook.url_not_https",
        msg: expect.stringMatching(/catalogue/) as string,
      }),
    );
  });
});

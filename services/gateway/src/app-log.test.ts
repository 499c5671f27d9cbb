import pino from "pino";
import { Registry } from "prom-client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { serveApp } from "./serve-app.testing.js";
import { issueApiKey, type ApiKeyRecord } from "./domain/api-key.js";
import type { CatalogClient } from "./grpc/catalog-client.js";
import { createGatewayApp } from "./app.js";
import { TokenBuckets } from "./domain/token-buckets.js";

/** The request log at LOG_LEVEL=warn: the request-scoped logger exists only for the lines it writes. */
describe("the gateway's request log at level warn", () => {
  const logged: { level: number; msg: string; requestId?: string; trace_id?: string }[] = [];
  const issued = issueApiKey();
  const record: ApiKeyRecord = {
    id: issued.id,
    name: "test",
    digest: issued.digest,
    scopes: [],
    tenantIds: [],
    revoked: false,
  };
  const pets = [{ id: "1", name: "Rex", categoryId: "2", status: 1 }];
  let failNext = false;
  const catalog = {
    listPets: () => (failNext ? Promise.reject(new Error("boom")) : Promise.resolve({ pets, nextPageToken: "" })),
  } as unknown as CatalogClient;
  let served: Awaited<ReturnType<typeof serveApp>>;
  let base: string;

  beforeAll(async () => {
    const app = createGatewayApp({
      catalog,
      notify: {} as never,
      webhooks: {} as never,
      projections: {} as never,
      rateLimits: new TokenBuckets({ ratePerSecond: 1000, burst: 1000 }),
      problemBaseUri: undefined,
      apiKeys: { find: (id) => Promise.resolve(id === record.id ? record : undefined) },
      logger: pino({ level: "warn" }, { write: (line: string) => void logged.push(JSON.parse(line) as never) }),
      registry: new Registry(),
      readiness: () => ({ ready: true, checks: {} }),
      publicBaseUrl: "",
    });
    served = await serveApp(app);
    base = served.base;
  });

  afterAll(() => served.close());

  const listPets = (requestId: string) =>
    fetch(`${base}/v1/pets`, { headers: { authorization: `Bearer ${issued.key}`, "x-request-id": requestId } });

  it("writes no line for a request that succeeds", async () => {
    const response = await listPets("req-quiet");
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual([{ id: 1, name: "Rex", categoryId: 2, status: "available" }]);
    expect(logged).toEqual([]);
  });

  it("writes a failure's error line with the request's id", async () => {
    failNext = true;
    const response = await listPets("req-failing");
    failNext = false;
    expect(response.status).toBe(500);
    expect(response.headers.get("x-request-id")).toBe("req-failing");
    expect(logged).toEqual([expect.objectContaining({ level: 50, msg: "internal error", requestId: "req-failing" })]);
    expect(logged[0]).not.toHaveProperty("trace_id");
  });
});

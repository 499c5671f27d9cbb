import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestStack, type TestStack } from "./stack.js";

/**
 * Rate limiting on both interfaces with one real gateway process (a fleet of one). Several
 * gateways sharing the limit: rate-limit-fleet.test.ts.
 */
describe("rate limiting", () => {
  let stack: TestStack;
  let key: string;
  let tenant: string;
  // Slow refill (one token per 10 s) so a slow machine cannot refill a bucket mid-test.
  const limited = { RATE_LIMIT_PER_SECOND: "0.1", RATE_LIMIT_BURST: "6" };

  beforeAll(async () => {
    stack = await startTestStack(limited);
    tenant = (await stack.admin("tenant", "create", "--name", "Limited")).id as string;
    key = (await stack.admin("key", "create", "--scopes", "tenant:read", "--tenants", tenant)).key as string;
  });
  afterAll(async () => stack?.stop());

  const get = (base: string, auth = `Bearer ${key}`) =>
    fetch(`${base}/api/v1/tenants/${tenant}`, { headers: { authorization: auth } });

  it("admits the burst, then answers 429 request.rate_limited with Retry-After no earlier than t", async () => {
    const statuses: number[] = [];
    let last: Response | undefined;
    for (let i = 0; i < 8; i++) {
      last = await get(stack.url);
      statuses.push(last.status);
      if (i === 0) expect(last.headers.get("ratelimit")).toBe('"default";r=5;t=10');
    }
    expect(statuses).toEqual([200, 200, 200, 200, 200, 200, 429, 429]);
    expect(last!.headers.get("ratelimit-policy")).toBe('"default";q=6;w=60');
    const t = Number(/;t=(\d+)$/.exec(last!.headers.get("ratelimit") ?? "")?.[1]);
    expect(Number(last!.headers.get("retry-after"))).toBeGreaterThanOrEqual(t);
    const body = (await last!.json()) as { code: string; status: number };
    expect(body).toMatchObject({ code: "request.rate_limited", status: 429 });
  });

  it("limits the animal catalog the same way, answering its Error shape", async () => {
    const catalogKey = (await stack.admin("key", "create")).key as string;
    const list = () => fetch(`${stack.url}/v1/pets`, { headers: { authorization: `Bearer ${catalogKey}` } });
    const statuses: number[] = [];
    let last: Response | undefined;
    for (let i = 0; i < 7; i++) statuses.push((last = await list()).status);
    expect(statuses).toEqual([200, 200, 200, 200, 200, 200, 429]);
    expect(last!.headers.get("retry-after")).toMatch(/^\d+$/);
    expect(await last!.json()).toEqual({ code: "rate_limited", message: expect.any(String) as string, status: 429 });
  });

  it("puts rate-limit headers on failures too, counting unauthenticated callers by address", async () => {
    const res = await get(stack.url, "Bearer nonsense");
    expect(res.status).toBe(401);
    expect(res.headers.get("ratelimit")).toMatch(/^"default";r=\d+;t=\d+$/);
  });
});

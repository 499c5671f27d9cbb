import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestStack, type TestStack } from "./stack.js";

describe("gateway shutdown", () => {
  let stack: TestStack;
  let key: string;
  beforeAll(async () => {
    stack = await startTestStack();
    key = (await stack.admin("key", "create", "--name", "drain")).key as string;
  });
  afterAll(async () => stack?.stop());

  it("on SIGTERM reports not ready, finishes in-flight requests, then exits 0", async () => {
    const db = new pg.Client({ connectionString: stack.scratch.url });
    await db.connect();
    try {
      // Hold a lock so the next list waits in the catalog's database: an in-flight request.
      await db.query("begin; lock table catalog.pets in access exclusive mode");
      const inFlight = fetch(`${stack.url}/v1/pets`, { headers: { authorization: `Bearer ${key}` } });
      await expect
        .poll(async () => {
          const { rows } = await db.query<{ n: string }>(
            "select count(*) as n from pg_locks where not granted and relation = 'catalog.pets'::regclass",
          );
          return Number(rows[0]!.n);
        })
        .toBeGreaterThan(0);
      stack.gateway.child.kill("SIGTERM");
      await expect.poll(() => stack.gateway.logs.some((l) => l.msg === "shutting down")).toBe(true);
      expect(stack.gateway.child.exitCode).toBeNull();
      await db.query("commit");
      const res = await inFlight;
      expect(res.status).toBe(200);
      expect(await res.json()).toEqual([]);
      expect(await stack.gateway.exited).toBe(0);
    } finally {
      await db.end();
    }
  });
});

/**
 * Partner requests through a gateway balancing over two catalog processes (CATALOG_ADDR names
 * both, round_robin), at a steady 100 GET /v1/pets a second for 3 s: one catalog process gets
 * SIGTERM, and every partner request is answered 200. The stopping process reports NOT_SERVING
 * at once while it goes on answering for SHUTDOWN_DRAIN_DELAY, then finishes what is in flight and
 * exits 0 within drain + grace. Then the same with no drain delay, as `npm start` runs its
 * processes. About 15 s in all.
 */
import { CatalogServiceService, PetStatus } from "@platform/proto/catalog/v1";
import type { ServiceProcess } from "@platform/local-stack/service-process";
import { createClient } from "@platform/service-kit/grpc-client";
import { HealthChecker } from "@platform/service-kit/grpc-health";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { grpcAddresses, startTestStack, type TestStack } from "./stack.js";

const DRAIN_MS = 1_000;
const GRACE_MS = 3_000;
const REQUESTS = 300;

describe("a catalog process stopped under partner load, beside another", () => {
  let stack: TestStack;
  let stopping: ServiceProcess;
  let stoppingAtOnce: ServiceProcess;
  let gatewayUrl: string;
  let gatewayAtOnceUrl: string;
  let key: string;
  const handled = (p: ServiceProcess) => p.logs.filter((l) => l.msg === "rpc handled").length;
  beforeAll(async () => {
    stack = await startTestStack();
    // Both cases' processes at once: one catalog process with a drain delay, one without (as
    // `npm start` runs them), each beside the stack's catalog behind a gateway of its own.
    [stopping, stoppingAtOnce] = await Promise.all([
      stack.startCatalogReplica({ SHUTDOWN_DRAIN_DELAY: `${DRAIN_MS}ms`, SHUTDOWN_GRACE: `${GRACE_MS}ms` }),
      stack.startCatalogReplica({ SHUTDOWN_GRACE: `${GRACE_MS}ms` }),
    ]);
    const gateways = await Promise.all(
      [stopping, stoppingAtOnce].map((catalog) =>
        stack.startGateway({ CATALOG_ADDR: grpcAddresses(catalog, stack.catalog) }),
      ),
    );
    [gatewayUrl, gatewayAtOnceUrl] = gateways.map((g) => `http://127.0.0.1:${g.listening.port as number}`) as [
      string,
      string,
    ];
    key = (await stack.admin("key", "create", "--name", "catalog-drain")).key as string;
  });
  afterAll(async () => {
    await stack?.stop();
  });

  it("answers every GET /v1/pets of a steady load across one process's SIGTERM; that process reports NOT_SERVING while it drains, then exits 0", async () => {
    const staying = stack.catalog;
    const port = stopping.listening.grpcPort as number;
    // Only the stopping process, to watch its health and whether it still answers.
    const direct = createClient(CatalogServiceService, `127.0.0.1:${port}`, { timeoutMs: 2_000 });
    const health = new HealthChecker(`127.0.0.1:${port}`);
    const request = { pageSize: 1, status: PetStatus.PET_STATUS_UNSPECIFIED, pageToken: "" };
    const handledBefore = [handled(stopping), handled(staying)];
    try {
      expect(await health.check("catalog.v1.CatalogService")).toBe("SERVING");
      const load = steadyLoad(gatewayUrl, key, REQUESTS);
      const exit = stopping.exited.then((code) => ({ code, at: performance.now() }));
      // The gateway balances over both: the stopping process is answering its share when signalled.
      await expect.poll(() => handled(stopping) - handledBefore[0]!, { timeout: 5_000 }).toBeGreaterThanOrEqual(20);
      const signalled = performance.now();
      stopping.child.kill("SIGTERM");
      await expect.poll(() => stopping.logs.some((l) => l.msg === "shutting down")).toBe(true);
      // Not ready at once, and still answering during the drain.
      expect(await health.check("catalog.v1.CatalogService")).toBe("NOT_SERVING");
      expect(await health.check("")).toBe("NOT_SERVING");
      await expect(direct.listPets(request, { requestId: "during-drain" })).resolves.toMatchObject({ pets: [] });
      expect(performance.now() - signalled).toBeLessThan(DRAIN_MS);

      const results = await load;
      expect(results.filter((r) => r !== "200")).toEqual([]);
      expect(results).toHaveLength(REQUESTS);
      const { code, at } = await exit;
      expect(code).toBe(0);
      const stoppedAfter = at - signalled;
      expect(stoppedAfter).toBeGreaterThanOrEqual(DRAIN_MS);
      expect(stoppedAfter).toBeLessThan(DRAIN_MS + GRACE_MS + 2_000);
      // The other process took the rest, and more than half: the stopping one got none once stopped.
      const served = [handled(stopping) - handledBefore[0]!, handled(staying) - handledBefore[1]!];
      expect(served[1]).toBeGreaterThan(REQUESTS / 2);
      expect(served[0]! + served[1]!).toBe(REQUESTS + 1); // and the direct call during the drain
    } finally {
      direct.close();
      health.close();
    }
  });

  // npm start's default (docs/operations.md, Shutdown): the gateway's balancer does not read
  // grpc.health.v1, it leaves a process at the GOAWAY of its stop, and a call the GOAWAY refused
  // goes to the other process.
  it("with no drain delay (npm start's default) still answers every GET /v1/pets: the gateway leaves the process at its GOAWAY", async () => {
    const staying = stack.catalog;
    const handledBefore = [handled(stoppingAtOnce), handled(staying)];
    const exit = stoppingAtOnce.exited.then((code) => ({ code, at: performance.now() }));
    const load = steadyLoad(gatewayAtOnceUrl, key, 200);
    await expect.poll(() => handled(stoppingAtOnce) - handledBefore[0]!, { timeout: 5_000 }).toBeGreaterThanOrEqual(20);
    const signalled = performance.now();
    stoppingAtOnce.child.kill("SIGTERM");
    const results = await load;
    expect(results.filter((r) => r !== "200")).toEqual([]);
    expect(results).toHaveLength(200);
    const { code, at } = await exit;
    expect(code).toBe(0);
    expect(at - signalled).toBeLessThan(GRACE_MS + 2_000);
    const served = [handled(stoppingAtOnce) - handledBefore[0]!, handled(staying) - handledBefore[1]!];
    expect(served[1]).toBeGreaterThan(100);
    expect(served[0]! + served[1]!).toBe(200);
  });
});

/**
 * `count` GET /v1/pets?limit=1 through the gateway at `url`, one every 10 ms (100 a second), each
 * sent without waiting for the others; resolves with every answer's status (or the error).
 */
function steadyLoad(url: string, key: string, count: number): Promise<string[]> {
  const outcomes: Promise<string>[] = [];
  return new Promise<void>((resolve) => {
    const tick = setInterval(() => {
      outcomes.push(
        fetch(`${url}/v1/pets?limit=1`, {
          headers: { authorization: `Bearer ${key}`, "x-request-id": `load-${outcomes.length}` },
        }).then(
          async (res) => {
            await res.arrayBuffer();
            return String(res.status);
          },
          (error: Error) => error.message,
        ),
      );
      if (outcomes.length === count) {
        clearInterval(tick);
        resolve();
      }
    }, 10);
  }).then(() => Promise.all(outcomes));
}

/**
 * Partner requests through a gateway balancing over two catalog processes (CATALOG_ADDR names
 * both, round_robin), at a steady 100 GET /v1/pets a second for 3 s: one catalog process gets
 * SIGTERM, and every partner request is answered 200. The stopping process reports NOT_SERVING
 * at once while it goes on answering for SHUTDOWN_DRAIN_DELAY, then finishes what is in flight and
 * exits 0 within drain + grace. About 10 s in all.
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
  let gatewayUrl: string;
  let key: string;
  beforeAll(async () => {
    stack = await startTestStack();
    stopping = await stack.startCatalogReplica({
      SHUTDOWN_DRAIN_DELAY: `${DRAIN_MS}ms`,
      SHUTDOWN_GRACE: `${GRACE_MS}ms`,
    });
    const gateway = await stack.startGateway({ CATALOG_ADDR: grpcAddresses(stopping, stack.catalog) });
    gatewayUrl = `http://127.0.0.1:${gateway.listening.port as number}`;
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
    const handled = (p: ServiceProcess) => p.logs.filter((l) => l.msg === "rpc handled").length;
    const handledBefore = [handled(stopping), handled(staying)];
    try {
      expect(await health.check("catalog.v1.CatalogService")).toBe("SERVING");
      const outcomes: Promise<string>[] = []; // the status, or the error
      let n = 0;
      const load = new Promise<void>((resolve) => {
        const tick = setInterval(() => {
          n += 1;
          outcomes.push(
            fetch(`${gatewayUrl}/v1/pets?limit=1`, {
              headers: { authorization: `Bearer ${key}`, "x-request-id": `load-${n}` },
            }).then(
              async (res) => {
                await res.arrayBuffer();
                return String(res.status);
              },
              (error: Error) => error.message,
            ),
          );
          if (n === REQUESTS) {
            clearInterval(tick);
            resolve();
          }
        }, 10);
      });
      const exit = stopping.exited.then((code) => ({ code, at: performance.now() }));
      await new Promise((resolve) => setTimeout(resolve, 800));
      const signalled = performance.now();
      stopping.child.kill("SIGTERM");
      await expect.poll(() => stopping.logs.some((l) => l.msg === "shutting down")).toBe(true);
      // Not ready at once, and still answering during the drain.
      expect(await health.check("catalog.v1.CatalogService")).toBe("NOT_SERVING");
      expect(await health.check("")).toBe("NOT_SERVING");
      await expect(direct.listPets(request, { requestId: "during-drain" })).resolves.toMatchObject({ pets: [] });
      expect(performance.now() - signalled).toBeLessThan(DRAIN_MS);

      await load;
      const results = await Promise.all(outcomes);
      expect(results.filter((r) => r !== "200")).toEqual([]);
      expect(results).toHaveLength(REQUESTS);
      const { code, at } = await exit;
      expect(code).toBe(0);
      const stoppedAfter = at - signalled;
      expect(stoppedAfter).toBeGreaterThanOrEqual(DRAIN_MS);
      expect(stoppedAfter).toBeLessThan(DRAIN_MS + GRACE_MS + 2_000);
      // The gateway balanced over both until the stop: the stopping one took a share (one in two
      // for the 0.8 s before the signal and the 1 s drain), the other one the rest.
      const served = [handled(stopping) - handledBefore[0]!, handled(staying) - handledBefore[1]!];
      expect(served[0]).toBeGreaterThan(20);
      expect(served[1]).toBeGreaterThan(REQUESTS / 2);
      expect(served[0]! + served[1]!).toBeGreaterThanOrEqual(REQUESTS);
    } finally {
      direct.close();
      health.close();
    }
  });
});

/**
 * Two catalog processes behind one balancing client under steady load (100 calls/s for 3 s,
 * about 6 s in all): SIGTERM one, and no call fails. The stopping process first reports
 * NOT_SERVING while it goes on answering for SHUTDOWN_DRAIN_DELAY, then finishes what is in flight
 * and exits 0 within drain + grace.
 *
 * The client is a direct grpc-js channel over both addresses with round_robin, as the gateway's
 * clients balance over a headless Service's pods in the chart.
 */
import { CatalogServiceService, PetStatus } from "@platform/proto/catalog/v1";
import { createScratchDatabase, type ScratchDatabase } from "@platform/local-stack/postgres-databases";
import { startServiceProcess, type ServiceProcess } from "@platform/local-stack/service-process";
import { CLIENT_CHANNEL_OPTIONS, createClient } from "@platform/service-kit/grpc-client";
import { HealthChecker } from "@platform/service-kit/grpc-health";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { join } from "node:path";

const entry = join(import.meta.dirname, "..", "dist", "src", "main.js");
const DRAIN_MS = 1_000;

describe("a catalog process stopped under load", () => {
  let scratch: ScratchDatabase;
  const processes: ServiceProcess[] = [];
  const start = () =>
    startServiceProcess({
      name: "catalog",
      entry,
      env: {
        DATABASE_URL: scratch.url,
        GRPC_HOST: "127.0.0.1",
        GRPC_PORT: "0",
        METRICS_PORT: "0",
        LOG_LEVEL: "debug",
        SHUTDOWN_DRAIN_DELAY: `${DRAIN_MS}ms`,
        SHUTDOWN_GRACE: "3s",
      },
    });
  beforeAll(async () => {
    scratch = await createScratchDatabase("catdrain");
    // The first process migrates; the second starts on the migrated schema.
    processes.push(await start());
    processes.push(await start());
  });
  afterAll(async () => {
    await Promise.all(processes.map((p) => p.stop("SIGKILL")));
    await scratch?.drop();
  });

  it("answers every call of a steady load across one process's SIGTERM; that process reports NOT_SERVING while it drains, then exits 0", async () => {
    const [stopping, staying] = processes as [ServiceProcess, ServiceProcess];
    const port = (p: ServiceProcess) => p.listening.grpcPort as number;
    const client = createClient(CatalogServiceService, `ipv4:127.0.0.1:${port(stopping)},127.0.0.1:${port(staying)}`, {
      timeoutMs: 2_000,
      channelOptions: {
        ...CLIENT_CHANNEL_OPTIONS,
        "grpc.service_config": JSON.stringify({ loadBalancingConfig: [{ round_robin: {} }] }),
      },
    });
    // Only the stopping process, to watch its health and whether it still answers.
    const direct = createClient(CatalogServiceService, `127.0.0.1:${port(stopping)}`, { timeoutMs: 2_000 });
    const health = new HealthChecker(`127.0.0.1:${port(stopping)}`);
    const request = { pageSize: 1, status: PetStatus.PET_STATUS_UNSPECIFIED, pageToken: "" };
    try {
      expect(await health.check("catalog.v1.CatalogService")).toBe("SERVING");
      const outcomes: Promise<string>[] = []; // "ok" or the error
      let n = 0;
      const load = new Promise<void>((resolve) => {
        const tick = setInterval(() => {
          outcomes.push(
            client.listPets(request, { requestId: `load-${n++}` }).then(
              () => "ok",
              (error: Error) => error.message,
            ),
          );
          if (n === 300) {
            clearInterval(tick);
            resolve();
          }
        }, 10);
      });
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
      expect(results.filter((r) => r !== "ok")).toEqual([]);
      expect(results).toHaveLength(300);
      expect(await stopping.exited).toBe(0);
      const stoppedAfter = performance.now() - signalled;
      expect(stoppedAfter).toBeGreaterThanOrEqual(DRAIN_MS);
      expect(stoppedAfter).toBeLessThan(DRAIN_MS + 3_000 + 2_000);
      // Both processes served the load (the balancer used both until the stop).
      const handled = (p: ServiceProcess) => p.logs.filter((l) => l.msg === "rpc handled").length;
      expect(handled(stopping)).toBeGreaterThan(20);
      expect(handled(staying)).toBeGreaterThan(100);
    } finally {
      client.close();
      direct.close();
      health.close();
    }
  });
});

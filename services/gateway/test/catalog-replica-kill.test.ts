/**
 * A dying pod costs no call (issue 31, item 3), the catalog's part: one gateway over two catalog
 * processes (CATALOG_ADDR names both), 800 GET /v1/pets at 80 a second, and one process killed
 * with -9 in the middle; three runs, the other process killed in the next (the killed one is
 * started again on its port in between). Every request of every run is answered 200: a call whose
 * connection died under it is retried once on the other process (grpc-client.ts). Before each
 * kill, a lock on catalog.pets holds some calls in flight on both processes for a moment, so each
 * run has calls the killed process took and never answered; calls sent in the milliseconds after
 * the kill, before the gateway notices, are retried too. About 40 s.
 */
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ServiceProcess } from "@platform/local-stack/service-process";
import { startCatalogReplicas, type CatalogReplicas } from "./catalog-replicas.testing.js";

const RUNS = 3;
const CALLS = 800;
const PER_SECOND = 80;
/** Calls waiting on the lock (on both processes) before the kill. */
const HELD = 6;

describe("a gateway over two catalog processes, one killed with -9 under 80 GET /v1/pets a second", () => {
  let replicas: CatalogReplicas;
  let catalogs: ServiceProcess[];
  let gateway: ServiceProcess;
  let url: string;
  let key: string;
  let database: pg.Client;

  beforeAll(async () => {
    replicas = await startCatalogReplicas({ prefix: "kill", count: 2, gatewayEnv: { LOG_LEVEL: "warn" } });
    ({ catalogs, gateway, url, key, database } = replicas);
  });
  afterAll(() => replicas?.stop());

  const get = async (requestId: string) => {
    try {
      const res = await fetch(`${url}/v1/pets?limit=1`, {
        headers: { authorization: `Bearer ${key}`, "x-request-id": requestId },
      });
      await res.arrayBuffer();
      return res.status;
    } catch (error) {
      return (error as Error).message;
    }
  };
  const waitingOnPets = async () =>
    Number(
      (
        await database.query<{ n: string }>(
          "select count(*) as n from pg_locks where not granted and relation = 'catalog.pets'::regclass",
        )
      ).rows[0]!.n,
    );
  const retries = () => gateway.logs.filter((l) => String(l.msg).includes("retried on another replica"));
  const address = (p: ServiceProcess) => `127.0.0.1:${p.listening.grpcPort as number}`;

  it(`answers every one of ${RUNS} x ${CALLS} calls 200 while one of the two processes is killed in each run`, async () => {
    const summary: string[] = [];
    for (let runIndex = 0; runIndex < RUNS; runIndex++) {
      const victim = catalogs[runIndex % 2]!;
      const survivor = catalogs[(runIndex + 1) % 2]!;
      const retriedBefore = retries().length;
      const statuses: Promise<number | string>[] = [];
      const lock = new pg.Client({ connectionString: replicas.scratch.url });
      await lock.connect();
      const started = performance.now();
      let killedAt = 0;
      // One call every 12.5 ms on a fixed schedule, none waiting for another.
      const load = (async () => {
        for (let i = 0; i < CALLS; i++) {
          const due = started + (i * 1_000) / PER_SECOND;
          await sleep(due - performance.now());
          statuses.push(get(`kill-${runIndex}-${i}`));
        }
      })();
      try {
        // Half way: hold the next calls on the lock, on both processes, then kill one.
        await sleep(((CALLS / PER_SECOND) * 1_000) / 2);
        await lock.query("begin; lock table catalog.pets in access exclusive mode");
        await expect.poll(waitingOnPets, { timeout: 5_000, interval: 5 }).toBeGreaterThanOrEqual(HELD);
        await victim.stop("SIGKILL");
        killedAt = performance.now() - started;
        // Calls go on arriving meanwhile; those the gateway still sends to the dead connection are retried.
        await sleep(100);
      } finally {
        await lock.query("commit").catch(() => undefined);
        await lock.end();
      }
      await load;
      const answered = await Promise.all(statuses);
      const notOk = answered.filter((s) => s !== 200);
      const retried = retries().slice(retriedBefore);
      const failures = [...new Set(retried.map((r) => (r.error as { details?: string }).details))].join(" | ");
      summary.push(
        `run ${runIndex + 1}: ${answered.length} calls, non-2xx ${notOk.length}, retried ${retried.length} (${failures}), kill at ${Math.round(killedAt)} ms`,
      );
      expect(answered).toHaveLength(CALLS);
      expect(notOk).toEqual([]);
      // The calls the victim held were retried, each on the survivor, and answered there.
      expect(retried.length).toBeGreaterThanOrEqual(1);
      for (const line of retried) {
        expect(line).toMatchObject({ from: address(victim), to: address(survivor), outcome: "OK" });
      }

      // The killed process starts again on its port, and the gateway calls it again before the next run.
      const port = victim.listening.grpcPort as number;
      const restarted = await replicas.startCatalog(victim.name, port);
      catalogs[runIndex % 2] = restarted;
      await expect
        .poll(async () => (await get(`back-${runIndex}`)) === 200 && (await handledBy(restarted)) > 0, {
          timeout: 10_000,
          interval: 50,
        })
        .toBe(true);
    }
    console.log(`[catalog kill -9 under load] ${summary.join("; ")}`);
  }, 120_000);
});

/** Calls of catalog.v1.CatalogService this catalog process has answered, from its /metrics. */
async function handledBy(catalog: ServiceProcess): Promise<number> {
  const text = await (await fetch(`http://127.0.0.1:${catalog.listening.metricsPort as number}/metrics`)).text();
  let total = 0;
  for (const match of text.matchAll(/^grpc_server_handled_total\{([^}]*)\} (\d+)$/gm)) {
    if (match[1]!.includes('grpc_service="catalog.v1.CatalogService"')) total += Number(match[2]);
  }
  return total;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, Math.max(0, ms)));

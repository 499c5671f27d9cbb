import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ServiceProcess } from "@platform/local-stack/service-process";
import { startCatalogReplicas, type CatalogReplicas } from "./catalog-replicas.testing.js";

/**
 * One gateway over three catalog processes named in one CATALOG_ADDR list: every call is balanced
 * (round_robin), and a process killed with -9 costs only the calls it had in flight that may not
 * be made twice: a read and a keyed create are retried on another process, an unkeyed create
 * answers 504 (docs/operations.md, "Balancing across replicas"). About 5 s.
 */
describe("a gateway balancing over three catalog processes", () => {
  let replicas: CatalogReplicas;
  let catalogs: ServiceProcess[];
  let gateway: ServiceProcess;
  let url: string;
  let key: string;
  let database: pg.Client;

  beforeAll(async () => {
    replicas = await startCatalogReplicas({
      prefix: "bal",
      count: 3,
      // A claim left by the killed process blocks its key for the lease: 2 s here, 30 s by default.
      catalogEnv: { IDEMPOTENCY_LEASE: "2s" },
      // The gateway's checks of the catalog share the calls' channel and so their round robin
      // (one channel per downstream): a check between two calls of the kill test's groups of
      // three would shift the rotation and put two calls of a group on one process. One check at
      // the start, then none while the test runs.
      gatewayEnv: { UPSTREAM_TIMEOUT: "30s", DOWNSTREAM_CHECK_INTERVAL: "1h" },
    });
    ({ catalogs, gateway, url, key, database } = replicas);
  });
  afterAll(() => replicas?.stop());

  /** Calls of catalog.v1.CatalogService this catalog process has answered, from its /metrics. */
  const handled = async (catalog: ServiceProcess) => {
    const text = await (await fetch(`http://127.0.0.1:${catalog.listening.metricsPort as number}/metrics`)).text();
    let total = 0;
    for (const match of text.matchAll(/^grpc_server_handled_total\{([^}]*)\} (\d+)$/gm)) {
      if (match[1]!.includes('grpc_service="catalog.v1.CatalogService"')) total += Number(match[2]);
    }
    return total;
  };
  const address = (p: ServiceProcess) => `127.0.0.1:${p.listening.grpcPort as number}`;
  const call = async (method: string, path: string, headers: Record<string, string> = {}, body?: object) => {
    const res = await fetch(`${url}${path}`, {
      method,
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json", ...headers },
      body: body && JSON.stringify(body),
    });
    return {
      status: res.status,
      retryAfter: res.headers.get("retry-after"),
      body: (await res.json()) as { code?: string },
    };
  };
  const waitingOnPets = async () =>
    Number(
      (
        await database.query<{ n: string }>(
          "select count(*) as n from pg_locks where not granted and relation = 'catalog.pets'::regclass",
        )
      ).rows[0]!.n,
    );
  const petsNamed = async (name: string) =>
    Number(
      (await database.query<{ n: string }>("select count(*) as n from catalog.pets where name = $1", [name])).rows[0]!
        .n,
    );

  it("spreads 300 GET /v1/pets over the three: each serves between 20% and 50%", async () => {
    const before = await Promise.all(catalogs.map(handled));
    let next = 0;
    const statuses: number[] = [];
    await Promise.all(
      Array.from({ length: 10 }, async () => {
        while (next < 300) {
          next += 1;
          statuses.push((await call("GET", "/v1/pets?limit=1")).status);
        }
      }),
    );
    expect(statuses.filter((s) => s === 200)).toHaveLength(300);
    const served = (await Promise.all(catalogs.map(handled))).map((n, i) => n - before[i]!);
    expect(served.reduce((a, b) => a + b, 0)).toBe(300);
    for (const n of served) {
      expect(n).toBeGreaterThanOrEqual(60);
      expect(n).toBeLessThanOrEqual(150);
    }
  });

  it("after kill -9 of one, its calls in flight: the GET retried on another (200), the keyed create retried there (409 in progress, then one pet), the unkeyed create 504; it gets nothing more", async () => {
    const [victim, ...survivors] = catalogs as [ServiceProcess, ServiceProcess, ServiceProcess];
    const lock = new pg.Client({ connectionString: replicas.scratch.url });
    await lock.connect();
    const stamp = Date.now();
    // Every call below waits on the lock, in flight on one of the three processes. Sent one at a
    // time, round_robin gives each process one call of each group of three: one GET, one keyed
    // create and one unkeyed create reach the victim.
    await lock.query("begin; lock table catalog.pets in access exclusive mode");
    const pending: { kind: "get" | "keyed" | "unkeyed"; name: string; answer: ReturnType<typeof call> }[] = [];
    try {
      for (const kind of ["get", "keyed", "unkeyed"] as const) {
        for (let i = 0; i < 3; i++) {
          const name = `${kind}-${stamp}-${i}`;
          const answer =
            kind === "get"
              ? call("GET", "/v1/pets?limit=1")
              : call("POST", "/v1/pets", kind === "keyed" ? { "idempotency-key": name } : {}, { name, categoryId: 1 });
          pending.push({ kind, name, answer });
          await expect.poll(waitingOnPets, { timeout: 5_000 }).toBe(pending.length);
        }
      }
      const survivorsBefore = await Promise.all(survivors.map(handled));
      await victim.stop("SIGKILL");
      // The victim's GET and keyed create are retried on a survivor: the GET waits there on the
      // lock with the others; the keyed create finds its key claimed by the dead process (409).
      // The unkeyed create is not retried: its outcome is unknown.
      const settled = await Promise.all(
        pending.map(async (p) => ({ ...p, result: await Promise.race([p.answer, wait(1_000)]) })),
      );
      const failed = settled.filter((s) => s.result !== "waiting");
      expect(failed.map((f) => [f.kind, f.result !== "waiting" && f.result.status])).toEqual([
        ["keyed", 409],
        ["unkeyed", 504],
      ]);
      for (const f of failed) {
        if (f.result === "waiting") continue;
        expect(f.result.body.code).toBe(f.kind === "unkeyed" ? "outcome_unknown" : "idempotency_in_progress");
        expect(f.result.retryAfter).toBeNull();
      }
      // New calls from the moment of the kill go to the two survivors only: none fails.
      const killedAt = performance.now();
      await lock.query("commit");
      const others = await Promise.all(
        pending.filter((p) => !failed.some((f) => f.name === p.name)).map((p) => p.answer),
      );
      expect(others.map((o) => o.status)).toEqual([200, 200, 200, 201, 201, 201, 201]);
      const after = await Promise.all(Array.from({ length: 30 }, () => call("GET", "/v1/pets?limit=1")));
      expect(after.map((a) => a.status)).toEqual(Array.from({ length: 30 }, () => 200));
      const survivorsAfter = await Promise.all(survivors.map(handled));
      // 6 calls that were in flight on the survivors, the victim's GET and keyed create retried
      // there, and 30 new ones: the victim got none of them.
      expect(survivorsAfter[0]! + survivorsAfter[1]! - survivorsBefore[0]! - survivorsBefore[1]!).toBe(38);
      expect(performance.now() - killedAt).toBeLessThan(5_000);
      const retried = gateway.logs.filter((l) => String(l.msg).includes("retried on another replica"));
      // Each retry is logged when it ends: the create's 409 at once, the GET once the lock was gone.
      expect(retried.map((r) => [r.method, r.from, r.outcome])).toEqual([
        ["/catalog.v1.CatalogService/CreatePet", address(victim), "ABORTED"],
        ["/catalog.v1.CatalogService/ListPets", address(victim), "OK"],
      ]);

      // The keyed create the victim had started: the retry with the same key gives exactly one pet.
      const keyed = failed.find((f) => f.kind === "keyed")!;
      // (409 idempotency_in_progress until the dead process's claim on the key has outlived IDEMPOTENCY_LEASE.)
      const retry = () =>
        call("POST", "/v1/pets", { "idempotency-key": keyed.name }, { name: keyed.name, categoryId: 1 });
      await expect.poll(async () => (await retry()).status, { timeout: 10_000 }).toBe(201);
      expect((await retry()).status).toBe(201);
      expect(await petsNamed(keyed.name)).toBe(1);
      // The unkeyed one's outcome really was unknown: its insert may have committed after the kill.
      const unkeyed = failed.find((f) => f.kind === "unkeyed")!;
      expect([0, 1]).toContain(await petsNamed(unkeyed.name));
    } finally {
      await lock.query("rollback").catch(() => undefined);
      await lock.end();
    }
  });
});

const wait = (ms: number) => new Promise<"waiting">((resolve) => setTimeout(() => resolve("waiting"), ms));

import { execFile } from "node:child_process";
import { join } from "node:path";
import { promisify } from "node:util";
import { credentials, Metadata, type ServiceError } from "@grpc/grpc-js";
import { createScratchDatabase, type ScratchDatabase } from "@platform/local-stack/postgres-databases";
import { startServiceProcess } from "@platform/local-stack/service-process";
import { CatalogServiceClient, PetStatus, type ListPetsResponse } from "@platform/proto/catalog/v1";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

const run = promisify(execFile);
const dist = join(import.meta.dirname, "..", "dist", "src");
const baseEnv = (url: string) => ({ DATABASE_URL: url, GRPC_PORT: "0", METRICS_PORT: "0", GRPC_HOST: "127.0.0.1" });

describe("the catalog process", () => {
  let scratch: ScratchDatabase;
  beforeAll(async () => {
    scratch = await createScratchDatabase("catalogproc");
  });
  afterAll(async () => scratch?.drop());

  it("fails fast on a bad setting, naming the variable", async () => {
    const result = await run(process.execPath, [join(dist, "main.js")], {
      env: { ...baseEnv(scratch.url), GRPC_PORT: "seventy", SHUTDOWN_GRACE: "soon" },
    }).catch((error: { code: number; stdout: string }) => error);
    expect((result as { code: number }).code).toBe(1);
    const line = JSON.parse(result.stdout.trim().split("\n").pop()!) as { level: string; msg: string };
    expect(line.level).toBe("fatal");
    expect(line.msg).toContain("GRPC_PORT");
    expect(line.msg).toContain("SHUTDOWN_GRACE");
  });

  it("migrates with the separate migrate command, idempotently", async () => {
    const first = await run(process.execPath, [join(dist, "migrate.js")], { env: baseEnv(scratch.url) });
    expect(first.stdout).toContain("20261122000000_create_pets");
    const second = await run(process.execPath, [join(dist, "migrate.js")], { env: baseEnv(scratch.url) });
    expect(second.stdout).toContain("schema already up to date");
  });

  it("serves /metrics in Prometheus format with JSON logs on stdout", async () => {
    const catalog = await startServiceProcess({
      name: "catalog",
      entry: join(dist, "main.js"),
      env: baseEnv(scratch.url),
    });
    try {
      const res = await fetch(`http://127.0.0.1:${catalog.listening.metricsPort as number}/metrics`);
      expect(res.status).toBe(200);
      expect(res.headers.get("content-type")).toContain("text/plain");
      expect(await res.text()).toContain("process_cpu_seconds_total");
      expect(catalog.logs.every((l) => !l.unparsed && typeof l.time === "string" && l.service === "catalog")).toBe(
        true,
      );
    } finally {
      await catalog.stop();
    }
  });

  it("on SIGTERM lets an in-flight call finish, refuses new ones, then exits 0", async () => {
    const catalog = await startServiceProcess({
      name: "catalog",
      entry: join(dist, "main.js"),
      env: baseEnv(scratch.url),
    });
    const client = new CatalogServiceClient(
      `127.0.0.1:${catalog.listening.grpcPort as number}`,
      credentials.createInsecure(),
    );
    const blocker = new pg.Client({ connectionString: scratch.url });
    await blocker.connect();
    try {
      // Hold a lock so the next ListPets waits inside the database: an in-flight call.
      await blocker.query("begin; lock table catalog.pets in access exclusive mode");
      const inFlight = new Promise<ListPetsResponse>((resolve, reject) =>
        client.listPets(
          { pageSize: 5, status: PetStatus.PET_STATUS_UNSPECIFIED, pageToken: "" },
          new Metadata(),
          (error, response) => (error ? reject(error) : resolve(response)),
        ),
      );
      await waitFor(async () => {
        const { rows } = await blocker.query<{ n: string }>(
          "select count(*) as n from pg_locks where not granted and relation = 'catalog.pets'::regclass",
        );
        return Number(rows[0]!.n) > 0;
      });
      catalog.child.kill("SIGTERM");
      await waitFor(() => Promise.resolve(catalog.logs.some((l) => l.msg === "shutting down")));
      // A new call after SIGTERM is refused while the old one is still running.
      const late = new Promise<ServiceError | undefined>((resolve) =>
        client.getPet({ id: "1" }, new Metadata(), { deadline: Date.now() + 2_000 }, (error) =>
          resolve(error ?? undefined),
        ),
      );
      expect(await late).toBeDefined();
      expect(catalog.child.exitCode).toBeNull();
      await blocker.query("commit");
      await expect(inFlight).resolves.toEqual({ pets: [], nextPageToken: "" });
      expect(await catalog.exited).toBe(0);
    } finally {
      client.close();
      await blocker.end();
      await catalog.stop("SIGKILL");
    }
  });
});

async function waitFor(check: () => Promise<boolean>, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error("condition not met in time");
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

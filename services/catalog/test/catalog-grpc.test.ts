import { credentials, Metadata, status as Status, type ServiceError } from "@grpc/grpc-js";
import { createScratchDatabase, type ScratchDatabase } from "@platform/local-stack/postgres-databases";
import {
  CatalogServiceClient,
  CatalogServiceService,
  PetStatus,
  type CreatePetRequest,
  type CreatePetResponse,
  type GetPetRequest,
  type GetPetResponse,
  type ListPetsRequest,
  type ListPetsResponse,
} from "@platform/proto/catalog/v1";
import { HealthChecker } from "@platform/service-kit/grpc-health";
import { defaultIdempotencyOptions } from "@platform/service-kit/idempotency";
import {
  createGrpcInstrumentation,
  instrumentService,
  startGrpcServer,
  type RunningGrpcServer,
} from "@platform/service-kit/grpc-server";
import { createLogger } from "@platform/service-kit/logger";
import { createMetricsRegistry } from "@platform/service-kit/metrics";
import { createDatabase, migrateToLatest, type Knex } from "@platform/service-kit/postgres";
import { Writable } from "node:stream";
import type { Registry } from "prom-client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { migrations } from "../migrations/index.js";
import { CATALOG_SCHEMA } from "../src/config.js";
import { createPetRepository, listPetsByStatusSql, listPetsSql } from "../src/db/pet-repository.js";
import { createCatalogService } from "../src/grpc/catalog-service.js";

/** A real catalog gRPC server on port 0 over a scratch database, and a real generated client. */
async function startCatalog(db: Knex) {
  const lines: Record<string, unknown>[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const line of chunk.toString().split("\n").filter(Boolean)) lines.push(JSON.parse(line) as never);
      done();
    },
  });
  const logger = createLogger("catalog", "debug", sink);
  const registry = createMetricsRegistry("catalog");
  const instrumentation = createGrpcInstrumentation(logger, registry);
  const server = await startGrpcServer({
    host: "127.0.0.1",
    port: 0,
    instrumentation,
    services: [
      {
        definition: CatalogServiceService,
        implementation: instrumentService(
          CatalogServiceService,
          createCatalogService({ db, pets: createPetRepository(db), idempotency: defaultIdempotencyOptions }),
          instrumentation,
        ),
      },
    ],
  });
  const client = new CatalogServiceClient(`127.0.0.1:${server.port}`, credentials.createInsecure());
  return { server, client, lines, registry };
}

function call<Req, Res>(
  method: (req: Req, md: Metadata, cb: (e: ServiceError | null, r: Res) => void) => unknown,
  request: Req,
  requestId = "req-test",
): Promise<Res> {
  const metadata = new Metadata();
  metadata.set("x-request-id", requestId);
  return new Promise((resolve, reject) => method(request, metadata, (e, r) => (e ? reject(e) : resolve(r))));
}

describe("catalog.v1.CatalogService over gRPC", () => {
  let scratch: ScratchDatabase;
  let db: Knex;
  let running: Awaited<ReturnType<typeof startCatalog>>;
  let server: RunningGrpcServer;
  let client: CatalogServiceClient;
  let registry: Registry;
  const list = (req: Partial<ListPetsRequest>) =>
    call<ListPetsRequest, ListPetsResponse>(client.listPets.bind(client), {
      pageSize: 0,
      status: PetStatus.PET_STATUS_UNSPECIFIED,
      pageToken: "",
      ...req,
    });
  const create = (
    name: string,
    status = PetStatus.PET_STATUS_UNSPECIFIED,
    categoryId = "1",
    idempotency: { idempotencyKey: string; idempotencyScope: string } = { idempotencyKey: "", idempotencyScope: "" },
  ) =>
    call<CreatePetRequest, CreatePetResponse>(client.createPet.bind(client), {
      name,
      categoryId,
      status,
      ...idempotency,
    });
  const failureOf = async (promise: Promise<unknown>) =>
    (await promise.then(
      () => expect.unreachable(),
      (e: unknown) => e,
    )) as ServiceError;
  const petsNamed = async (name: string) => Number((await db("pets").count({ n: "*" }).where({ name }))[0]!.n);

  beforeAll(async () => {
    scratch = await createScratchDatabase("catalog");
    db = createDatabase({ url: scratch.url, schema: CATALOG_SCHEMA });
    await migrateToLatest(db, CATALOG_SCHEMA, migrations);
    running = await startCatalog(db);
    ({ server, client, registry } = running);
  });

  afterAll(async () => {
    client?.close();
    await server?.shutdown(1_000);
    await db?.destroy();
    await scratch?.drop();
  });

  it("reports SERVING on grpc.health.v1 for the server and the service", async () => {
    const health = new HealthChecker(`127.0.0.1:${server.port}`);
    expect(await health.check("")).toBe("SERVING");
    expect(await health.check("catalog.v1.CatalogService")).toBe("SERVING");
    expect(await health.check("nope.v1.Nope")).toBe("SERVICE_UNKNOWN");
    health.close();
  });

  it("creates pets with the default status and reads them back", async () => {
    const { pet } = await create("Rex");
    expect(pet).toMatchObject({ name: "Rex", categoryId: "1", status: PetStatus.PET_STATUS_AVAILABLE });
    const { pet: again } = await call<GetPetRequest, GetPetResponse>(client.getPet.bind(client), { id: pet!.id });
    expect(again).toEqual(pet);
  });

  it("pages through every pet exactly once, by id, with and without a status filter", async () => {
    for (let i = 0; i < 25; i++) {
      await create(`pet-${i}`, i % 2 ? PetStatus.PET_STATUS_SOLD : PetStatus.PET_STATUS_PENDING);
    }
    const all = await db("pets").select("id", "status").orderBy("id");
    for (const [filter, expected] of [
      [PetStatus.PET_STATUS_UNSPECIFIED, all],
      [PetStatus.PET_STATUS_SOLD, all.filter((r: { status: string }) => r.status === "sold")],
    ] as const) {
      const seen: string[] = [];
      let token = "";
      let pages = 0;
      do {
        const page = await list({ pageSize: 7, status: filter, pageToken: token });
        expect(page.pets.length).toBeLessThanOrEqual(7);
        seen.push(...page.pets.map((p) => p.id));
        token = page.nextPageToken;
        pages++;
      } while (token);
      expect(seen).toEqual(expected.map((r: { id: string }) => String(r.id)));
      expect(pages).toBe(Math.ceil(expected.length / 7) || 1);
    }
  });

  it("plans every page as an index range scan from the cursor on, also in the plan Postgres caches for a prepared statement", async () => {
    // force_generic_plan: the plan a prepared statement is given after its first executions,
    // made without the values. A page deep in the list must not scan the pets before its cursor.
    const plans = await db.transaction(async (trx) => {
      await trx.raw("set local plan_cache_mode = force_generic_plan");
      const planOf = async (name: string, text: string, values: string) => {
        await trx.raw(`prepare ${name} as ${text}`);
        const plan = await trx.raw<{ rows: { "QUERY PLAN": string }[] }>(
          `explain (costs off) execute ${name}(${values})`,
        );
        return plan.rows.map((row) => row["QUERY PLAN"].trim());
      };
      return {
        all: await planOf("list_all", listPetsSql.text, "'100', 21"),
        byStatus: await planOf("list_by_status", listPetsByStatusSql.text, "'sold', '100', 21"),
      };
    });
    expect(plans.all).toEqual(["Limit", "->  Index Scan using pets_pkey on pets", "Index Cond: (id > $1)"]);
    expect(plans.byStatus).toEqual([
      "Limit",
      "->  Index Scan using pets_status_id_idx on pets",
      "Index Cond: ((status = $1) AND (id > $2))",
    ]);
  });

  it("defaults the page size to 20", async () => {
    expect((await list({})).pets).toHaveLength(20);
  });

  it.each([
    ["an empty name", () => create("  "), Status.INVALID_ARGUMENT, "pet.invalid"],
    ["a zero category", () => create("Rex", 0, "0"), Status.INVALID_ARGUMENT, "pet.invalid"],
    ["an unknown status", () => create("Rex", 42 as PetStatus), Status.INVALID_ARGUMENT, "pet.invalid"],
    ["a page size over 100", () => list({ pageSize: 101 }), Status.INVALID_ARGUMENT, "page.invalid_limit"],
    ["a forged page token", () => list({ pageToken: "bm9wZQ" }), Status.INVALID_ARGUMENT, "page.invalid_cursor"],
    [
      "an unknown pet",
      () => call<GetPetRequest, GetPetResponse>(client.getPet.bind(client), { id: "987654321" }),
      Status.NOT_FOUND,
      "pet.not_found",
    ],
  ])("answers %s with its status and a stable error-code", async (_label, act, code, errorCode) => {
    const error = (await act().then(
      () => expect.unreachable(),
      (e: unknown) => e,
    )) as ServiceError;
    expect(error.code).toBe(code);
    expect(error.metadata.get("error-code")).toEqual([errorCode]);
  });

  describe("idempotent creation", () => {
    const keyed = (key: string, scope = "key_a") => ({ idempotencyKey: key, idempotencyScope: scope });

    it("creates once per key and replays the same pet to a repeat", async () => {
      const first = await create("Once", PetStatus.PET_STATUS_SOLD, "4", keyed("create-once-1"));
      expect(first.replayed).toBe(false);
      const again = await create("Once", PetStatus.PET_STATUS_SOLD, "4", keyed("create-once-1"));
      expect(again).toEqual({ pet: first.pet, replayed: true });
      expect(await petsNamed("Once")).toBe(1);
    });

    it("keeps callers apart: the same key under another scope is another creation", async () => {
      const a = await create("Scoped", undefined, "1", keyed("shared-key-1", "key_a"));
      const b = await create("Scoped", undefined, "1", keyed("shared-key-1", "key_b"));
      expect(b.replayed).toBe(false);
      expect(b.pet!.id).not.toBe(a.pet!.id);
    });

    it("refuses the key for a different request with FAILED_PRECONDITION idempotency.key_reused", async () => {
      await create("Reused", undefined, "1", keyed("reused-key-1"));
      const error = await failureOf(create("Reused", undefined, "2", keyed("reused-key-1")));
      expect(error.code).toBe(Status.FAILED_PRECONDITION);
      expect(error.metadata.get("error-code")).toEqual(["idempotency.key_reused"]);
      expect(await petsNamed("Reused")).toBe(1);
    });

    it("answers a repeat while the first is still inserting with ABORTED, then replays it", async () => {
      const lock = await db.transaction();
      await lock.raw("lock table pets in exclusive mode"); // inserts wait, reads do not
      let first: Promise<CreatePetResponse> | undefined;
      try {
        first = create("Slow", undefined, "1", keyed("slow-key-01"));
        await expect
          .poll(async () =>
            Number((await db("idempotency_keys").count({ n: "*" }).where({ key: "slow-key-01" }))[0]!.n),
          )
          .toBe(1);
        const error = await failureOf(create("Slow", undefined, "1", keyed("slow-key-01")));
        expect(error.code).toBe(Status.ABORTED);
        expect(error.metadata.get("error-code")).toEqual(["idempotency.in_progress"]);
      } finally {
        await lock.commit();
      }
      const created = await first;
      expect(created.replayed).toBe(false);
      expect(await create("Slow", undefined, "1", keyed("slow-key-01"))).toEqual({ pet: created.pet, replayed: true });
      expect(await petsNamed("Slow")).toBe(1);
    });

    it("creates exactly one pet for 20 concurrent requests with the same key", async () => {
      const outcomes = await Promise.allSettled(
        Array.from({ length: 20 }, () => create("Burst", undefined, "1", keyed("burst-key-01"))),
      );
      for (const outcome of outcomes) {
        if (outcome.status === "rejected") expect((outcome.reason as ServiceError).code).toBe(Status.ABORTED);
      }
      const applied = outcomes.filter((o) => o.status === "fulfilled" && !o.value.replayed);
      expect(applied).toHaveLength(1);
      expect(await petsNamed("Burst")).toBe(1);
    });

    it.each([
      ["a malformed key", keyed("short")],
      ["a key without its caller", keyed("no-scope-key-1", "")],
    ])("answers %s with INVALID_ARGUMENT idempotency.invalid_key and creates nothing", async (_label, idempotency) => {
      const error = await failureOf(create("Unkeyed", undefined, "1", idempotency));
      expect(error.code).toBe(Status.INVALID_ARGUMENT);
      expect(error.metadata.get("error-code")).toEqual(["idempotency.invalid_key"]);
      expect(await petsNamed("Unkeyed")).toBe(0);
    });

    it("does not burn the key on an invalid pet: the corrected request may use it", async () => {
      const error = await failureOf(create(" ", undefined, "1", keyed("fix-and-retry-1")));
      expect(error.metadata.get("error-code")).toEqual(["pet.invalid"]);
      expect((await create("Fixed", undefined, "1", keyed("fix-and-retry-1"))).replayed).toBe(false);
    });
  });

  it("logs with the caller's request id and counts calls in grpc_server_handled_total", async () => {
    await call<GetPetRequest, GetPetResponse>(client.getPet.bind(client), { id: "1" }, "req-trace-me");
    expect(running.lines.some((l) => l.requestId === "req-trace-me" && l.grpcMethod)).toBe(true);
    const text = await registry.metrics();
    expect(text).toMatch(/grpc_server_handled_total\{[^}]*grpc_method="GetPet"[^}]*grpc_code="OK"[^}]*\} [1-9]/);
    expect(text).toMatch(/grpc_server_handled_total\{[^}]*grpc_method="GetPet"[^}]*grpc_code="NOT_FOUND"/);
    expect(text).toContain("grpc_server_handling_seconds_bucket");
  });

  it("answers UNAVAILABLE, not INTERNAL, when the database cannot be reached", async () => {
    const deadDb = createDatabase({ url: "postgres://postgres@127.0.0.1:1/none", schema: CATALOG_SCHEMA });
    const dead = await startCatalog(deadDb);
    try {
      const error = (await call<GetPetRequest, GetPetResponse>(dead.client.getPet.bind(dead.client), { id: "1" }).catch(
        (e: unknown) => e,
      )) as ServiceError;
      expect(error.code).toBe(Status.UNAVAILABLE);
      expect(error.details).not.toMatch(/ECONNREFUSED|127\.0\.0\.1/);
    } finally {
      dead.client.close();
      await dead.server.shutdown(1_000);
      await deadDb.destroy();
    }
  });
});

import {
  Metadata,
  Server,
  ServerCredentials,
  status as Status,
  type sendUnaryData,
  type ServerUnaryCall,
  type UntypedServiceImplementation,
} from "@grpc/grpc-js";
import {
  CatalogServiceService,
  type GetPetRequest,
  type GetPetResponse,
  type ListPetsRequest,
  type ListPetsResponse,
} from "@platform/proto/catalog/v1";
import {
  ProjectionServiceService,
  type ListWorkRequest,
  type ListWorkResponse,
} from "@platform/proto/notify/v1/projections";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import pino from "pino";
import { Registry } from "prom-client";
import { CLIENT_CHANNEL_OPTIONS, createChannel, createClient, GrpcCallError, grpcTarget } from "./grpc-client.js";
import { HealthChecker } from "./grpc-health.js";
import {
  ACTOR_METADATA,
  createGrpcInstrumentation,
  ERROR_CODE_METADATA,
  REQUEST_ID_METADATA,
  startGrpcServer,
} from "./grpc-server.js";

/** What the server saw of one call: its method, request id metadata and the client's address. */
interface Seen {
  method: string;
  requestId: unknown;
  peer: string;
  /** The x-actor metadata, when the call carried one. */
  actor: unknown;
}

const pet = (id: string, name: string) => ({ id, name, categoryId: "1", status: 1 });

/** A real grpc-js server on port 0 serving two services, as the services serve theirs. */
async function startServer(seen: Seen[]): Promise<{ server: Server; address: string }> {
  const record = (method: string, call: ServerUnaryCall<unknown, unknown>) =>
    seen.push({
      method,
      requestId: call.metadata.get(REQUEST_ID_METADATA)[0],
      peer: call.getPeer(),
      actor: call.metadata.get(ACTOR_METADATA)[0],
    });
  const catalog: UntypedServiceImplementation = {
    getPet(call: ServerUnaryCall<GetPetRequest, GetPetResponse>, callback: sendUnaryData<GetPetResponse>) {
      record("getPet", call);
      const { id } = call.request;
      if (id === "404") {
        const trailers = new Metadata();
        trailers.set(ERROR_CODE_METADATA, "pet.not_found");
        callback({ code: Status.NOT_FOUND, details: "no pet 404", metadata: trailers });
      } else if (id === "300") {
        // Answers after 300 ms: later than a short deadline, sooner than a long one.
        setTimeout(() => callback(null, { pet: pet(id, "slow") }), 300);
      } else {
        callback(null, { pet: pet(id, "Rex") });
      }
    },
    listPets(call: ServerUnaryCall<ListPetsRequest, ListPetsResponse>, callback: sendUnaryData<ListPetsResponse>) {
      record("listPets", call);
      callback(null, { pets: [pet("1", "Rex"), pet("2", "Tom")], nextPageToken: "" });
    },
    createPet(_call: unknown, callback: sendUnaryData<unknown>) {
      callback({ code: Status.UNIMPLEMENTED, details: "not here" });
    },
  };
  const projections: UntypedServiceImplementation = {
    listWork(call: ServerUnaryCall<ListWorkRequest, ListWorkResponse>, callback: sendUnaryData<ListWorkResponse>) {
      record("listWork", call);
      callback(null, { items: [], nextCursor: `after:${call.request.tenantId}` });
    },
  };
  const server = new Server();
  server.addService(CatalogServiceService, catalog);
  server.addService(ProjectionServiceService, projections);
  const port = await new Promise<number>((resolve, reject) =>
    server.bindAsync("127.0.0.1:0", ServerCredentials.createInsecure(), (error, bound) =>
      error ? reject(error) : resolve(bound),
    ),
  );
  return { server, address: `127.0.0.1:${port}` };
}

async function failure(call: Promise<unknown>): Promise<GrpcCallError> {
  const error = await call.then(
    () => expect.unreachable("the call succeeded"),
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(GrpcCallError);
  return error as GrpcCallError;
}

describe("createClient: typed calls over a real gRPC server", () => {
  const seen: Seen[] = [];
  let server: Server;
  let address: string;

  beforeAll(async () => {
    ({ server, address } = await startServer(seen));
  });
  afterAll(() => server?.forceShutdown());

  it("calls a unary method and sends the request id as metadata", async () => {
    const catalog = createClient(CatalogServiceService, address, { timeoutMs: 5_000 });
    try {
      const answer: GetPetResponse = await catalog.getPet({ id: "7" }, { requestId: "req-get-7" });
      expect(answer).toEqual({ pet: pet("7", "Rex") });
      const listed = await catalog.listPets({ pageSize: 2, status: 0, pageToken: "" }, { requestId: "req-list" });
      expect(listed.pets.map((p) => p.name)).toEqual(["Rex", "Tom"]);
      expect(seen.slice(-2).map(({ method, requestId }) => ({ method, requestId }))).toEqual([
        { method: "getPet", requestId: "req-get-7" },
        { method: "listPets", requestId: "req-list" },
      ]);
    } finally {
      catalog.close();
    }
  });

  it("sends the actor of a call made for a person as x-actor metadata, and none otherwise", async () => {
    const catalog = createClient(CatalogServiceService, address, { timeoutMs: 5_000 });
    try {
      await catalog.getPet({ id: "7" }, { requestId: "req-actor", actor: "console:usr_0123456789abcdef01234567" });
      await catalog.getPet({ id: "7" }, { requestId: "req-no-actor" });
      expect(seen.slice(-2).map(({ requestId, actor }) => ({ requestId, actor }))).toEqual([
        { requestId: "req-actor", actor: "console:usr_0123456789abcdef01234567" },
        { requestId: "req-no-actor", actor: undefined },
      ]);
    } finally {
      catalog.close();
    }
  });

  it("keeps a failure's status code, details and trailing metadata", async () => {
    const catalog = createClient(CatalogServiceService, address, { timeoutMs: 5_000 });
    try {
      const error = await failure(catalog.getPet({ id: "404" }, { requestId: "req-404" }));
      expect(error.code).toBe(Status.NOT_FOUND);
      expect(error.details).toBe("no pet 404");
      expect(error.metadata.get(ERROR_CODE_METADATA)).toEqual(["pet.not_found"]);
      expect(error.message).toBe("5 NOT_FOUND: no pet 404");
      expect(
        (
          await failure(
            catalog.createPet(
              { name: "Rex", categoryId: "1", status: 1, idempotencyKey: "", idempotencyScope: "" },
              { requestId: "r" },
            ),
          )
        ).code,
      ).toBe(Status.UNIMPLEMENTED);
    } finally {
      catalog.close();
    }
  });

  it("ends a call at the default deadline, or at the call's own when it gives one", async () => {
    const short = createClient(CatalogServiceService, address, { timeoutMs: 100 });
    const long = createClient(CatalogServiceService, address, { timeoutMs: 5_000 });
    try {
      expect((await failure(short.getPet({ id: "300" }, { requestId: "req-slow" }))).code).toBe(
        Status.DEADLINE_EXCEEDED,
      );
      // A longer deadline for this call only.
      expect((await short.getPet({ id: "300" }, { requestId: "req-slow", timeoutMs: 5_000 })).pet!.name).toBe("slow");
      // A shorter one.
      expect((await failure(long.getPet({ id: "300" }, { requestId: "req-slow", timeoutMs: 50 }))).code).toBe(
        Status.DEADLINE_EXCEEDED,
      );
    } finally {
      short.close();
      long.close();
    }
  });

  it("puts several services of one address on one channel: spread definitions, or one channel passed to each", async () => {
    // Each channel with its own subchannel pool: without it, grpc-js shares one connection between
    // channels of equal options, and the peer comparison below would prove nothing.
    const ownConnection = { ...CLIENT_CHANNEL_OPTIONS, "grpc.use_local_subchannel_pool": 1 };
    const both = createClient({ ...CatalogServiceService, ...ProjectionServiceService }, address, {
      timeoutMs: 5_000,
      channelOptions: ownConnection,
    });
    const channel = createChannel(address, ownConnection);
    const catalog = createClient(CatalogServiceService, channel, { timeoutMs: 5_000 });
    const projections = createClient(ProjectionServiceService, channel, { timeoutMs: 5_000 });
    try {
      const from = seen.length;
      await both.getPet({ id: "1" }, { requestId: "a" });
      const work: ListWorkResponse = await both.listWork({ tenantId: "t1", limit: 0, cursor: "" }, { requestId: "b" });
      expect(work.nextCursor).toBe("after:t1");
      await catalog.getPet({ id: "2" }, { requestId: "c" });
      await projections.listWork({ tenantId: "t2", limit: 0, cursor: "" }, { requestId: "d" });
      const calls = seen.slice(from);
      expect(calls.map((c) => `${c.method}:${String(c.requestId)}`)).toEqual([
        "getPet:a",
        "listWork:b",
        "getPet:c",
        "listWork:d",
      ]);
      // Each pair's calls came over its channel's one connection (one client port), the pairs over two.
      expect(calls[0]!.peer).toBe(calls[1]!.peer);
      expect(calls[2]!.peer).toBe(calls[3]!.peer);
      expect(calls[0]!.peer).not.toBe(calls[2]!.peer);
    } finally {
      both.close();
      catalog.close();
      projections.close();
      channel.close();
    }
  });

  it("close() shuts the channel it opened, and leaves a channel passed in to its opener", async () => {
    const own = createClient(CatalogServiceService, address, { timeoutMs: 5_000 });
    await own.getPet({ id: "1" }, { requestId: "before" });
    own.close();
    await expect(own.getPet({ id: "1" }, { requestId: "after" })).rejects.toThrow(/shut down/);

    const channel = createChannel(address);
    const first = createClient(CatalogServiceService, channel, { timeoutMs: 5_000 });
    const second = createClient(ProjectionServiceService, channel, { timeoutMs: 5_000 });
    first.close();
    expect((await second.listWork({ tenantId: "t", limit: 0, cursor: "" }, { requestId: "still" })).nextCursor).toBe(
      "after:t",
    );
    expect((await first.getPet({ id: "3" }, { requestId: "still" })).pet!.id).toBe("3");
    channel.close();
    await expect(second.listWork({ tenantId: "t", limit: 0, cursor: "" }, { requestId: "x" })).rejects.toThrow(
      /shut down/,
    );
  });

  it("derives its methods from the definition: one function per unary method, nothing else but close", () => {
    const catalog = createClient(CatalogServiceService, address, { timeoutMs: 5_000 });
    expect(Object.keys(catalog).sort()).toEqual(["close", "createPet", "getPet", "listPets"]);
    catalog.close();
    const clash = { close: { ...CatalogServiceService.getPet, path: "/x.v1.X/Close" } };
    expect(() => createClient(clash, address, { timeoutMs: 5_000 })).toThrow(/close/);
  });
});

describe("balancing over several processes of one service", () => {
  it("turns an *_ADDR list of IP:port pairs into one ipv4: / ipv6: target, and passes anything else as it is", () => {
    expect(grpcTarget("127.0.0.1:50051")).toBe("127.0.0.1:50051");
    expect(grpcTarget("catalog:50051")).toBe("catalog:50051");
    expect(grpcTarget("dns:///catalog-headless.ns.svc.cluster.local:50051")).toBe(
      "dns:///catalog-headless.ns.svc.cluster.local:50051",
    );
    expect(grpcTarget("127.0.0.1:50051,127.0.0.1:50061, 127.0.0.1:50071")).toBe(
      "ipv4:127.0.0.1:50051,127.0.0.1:50061,127.0.0.1:50071",
    );
    expect(grpcTarget("[::1]:50051,[::1]:50061")).toBe("ipv6:[::1]:50051,[::1]:50061");
    expect(grpcTarget("ipv4:127.0.0.1:50051,127.0.0.1:50061")).toBe("ipv4:127.0.0.1:50051,127.0.0.1:50061");
    expect(() => grpcTarget("catalog-a:50051,catalog-b:50051")).toThrow(/dns:\/\/\//);
    expect(() => grpcTarget("127.0.0.1:50051,[::1]:50061")).toThrow(/one family/);
  });

  it("sends each call to the next process of the list (round_robin), and the health check answers while one serves", async () => {
    const seen: Seen[][] = [[], [], []];
    const servers = await Promise.all(seen.map((s) => startServer(s)));
    const health = await Promise.all(
      servers.map(async () => {
        const running = await startGrpcServer({
          host: "127.0.0.1",
          port: 0,
          services: [],
          instrumentation: createGrpcInstrumentation(pino({ level: "silent" }), new Registry()),
        });
        return running;
      }),
    );
    const catalog = createClient(CatalogServiceService, servers.map((s) => s.address).join(","), { timeoutMs: 5_000 });
    const checker = new HealthChecker(health.map((h) => `127.0.0.1:${h.port}`).join(","));
    try {
      // The first call connects to all three; from then on each call goes to the next.
      await catalog.getPet({ id: "1" }, { requestId: "warm" });
      for (let i = 0; i < 30; i++) await catalog.getPet({ id: "1" }, { requestId: `rr-${i}` });
      expect(seen.map((s) => s.filter((c) => c.requestId !== "warm").length)).toEqual([10, 10, 10]);

      expect(await checker.check()).toBe("SERVING");
      await health[0]!.shutdown(1_000);
      await health[1]!.shutdown(1_000);
      for (let i = 0; i < 3; i++) expect(await checker.check()).toBe("SERVING");
      await health[2]!.shutdown(1_000);
      expect(await checker.check("", 300)).toBe("UNREACHABLE");
    } finally {
      catalog.close();
      checker.close();
      for (const { server } of servers) server.forceShutdown();
    }
  });

  it("ends a connection at GRPC_MAX_CONNECTION_AGE: the client reconnects (and re-resolves) without a failed call", async () => {
    const peers: string[] = [];
    const running = await startGrpcServer({
      host: "127.0.0.1",
      port: 0,
      maxConnectionAgeMs: 300,
      maxConnectionAgeGraceMs: 1_000,
      instrumentation: createGrpcInstrumentation(pino({ level: "silent" }), new Registry()),
      services: [
        {
          definition: CatalogServiceService,
          implementation: {
            getPet(call: ServerUnaryCall<GetPetRequest, GetPetResponse>, callback: sendUnaryData<GetPetResponse>) {
              peers.push(call.getPeer()); // the client's address and port: one per connection
              callback(null, { pet: pet(call.request.id, "Rex") });
            },
          },
        },
      ],
    });
    const catalog = createClient(CatalogServiceService, `127.0.0.1:${running.port}`, { timeoutMs: 5_000 });
    try {
      const started = Date.now();
      while (Date.now() - started < 1_200) {
        await catalog.getPet({ id: "1" }, { requestId: "age" });
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      // Every call succeeded, over a new connection about every 300 ms: the server sent GOAWAY at the age.
      expect(peers.length).toBeGreaterThan(10);
      expect(new Set(peers).size).toBeGreaterThanOrEqual(3);
    } finally {
      catalog.close();
      await running.shutdown(1_000);
    }
  });
});

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
import { createServer, connect, type AddressInfo, type Socket } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import pino from "pino";
import { Registry } from "prom-client";
import {
  CLIENT_CHANNEL_OPTIONS,
  createChannel,
  createClient,
  GrpcCallError,
  grpcTarget,
  type ReplicaRetry,
} from "./grpc-client.js";
import { HealthChecker } from "./grpc-health.js";
import {
  ACTOR_METADATA,
  createGrpcInstrumentation,
  ERROR_CODE_METADATA,
  REQUEST_ID_METADATA,
  startGrpcServer,
} from "./grpc-server.js";
import { NO_OTHER_REPLICA } from "./round-robin-avoiding.js";

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

/**
 * A TCP proxy in front of a server: the client connects to it as to a replica, and `kill` does to
 * the client's connections what a process killed with -9 does (the kernel closes its sockets:
 * FIN, or RST when data was left unread) and refuses new ones.
 */
async function startProxy(targetPort: number): Promise<{ address: string; kill(how: "FIN" | "RST"): void }> {
  const pairs = new Set<[Socket, Socket]>();
  const proxy = createServer((client) => {
    const upstream = connect(targetPort, "127.0.0.1");
    const pair: [Socket, Socket] = [client, upstream];
    pairs.add(pair);
    client.pipe(upstream).pipe(client);
    const drop = () => {
      pairs.delete(pair);
      client.destroy();
      upstream.destroy();
    };
    for (const socket of pair) socket.on("error", drop).on("close", drop);
  });
  await new Promise<void>((resolve) => proxy.listen(0, "127.0.0.1", resolve));
  return {
    address: `127.0.0.1:${(proxy.address() as AddressInfo).port}`,
    kill(how) {
      proxy.close();
      for (const [client, upstream] of pairs) {
        if (how === "RST") client.resetAndDestroy();
        else client.destroy();
        upstream.destroy();
      }
    },
  };
}

describe("a repeatable call whose connection dies before the answer: retried once on another replica", () => {
  /**
   * Two replicas of getPet behind proxies, recording the request ids they get; the first holds
   * every call for a pet id from 9000 (it never answers it), the second answers every call.
   */
  async function startPair() {
    const seen: string[][] = [[], []];
    const held: string[] = [];
    const servers = await Promise.all(
      seen.map(async (ids, index) => {
        const server = new Server();
        server.addService(CatalogServiceService, {
          getPet(call: ServerUnaryCall<GetPetRequest, GetPetResponse>, callback: sendUnaryData<GetPetResponse>) {
            ids.push(String(call.metadata.get(REQUEST_ID_METADATA)[0]));
            if (index === 0 && Number(call.request.id) >= 9_000) held.push(call.request.id);
            else callback(null, { pet: pet(call.request.id, "Rex") });
          },
        });
        const port = await new Promise<number>((resolve, reject) =>
          server.bindAsync("127.0.0.1:0", ServerCredentials.createInsecure(), (error, bound) =>
            error ? reject(error) : resolve(bound),
          ),
        );
        return { server, port };
      }),
    );
    const proxies = await Promise.all(servers.map((s) => startProxy(s.port)));
    return {
      seen,
      held,
      proxies,
      addresses: proxies.map((p) => p.address).join(","),
      close: () => servers.forEach((s) => s.server.forceShutdown()),
    };
  }

  /** A client over both, once both replicas have answered a call (both connected). */
  async function connectedClient(pair: { addresses: string; seen: string[][] }) {
    const catalog = createClient(CatalogServiceService, pair.addresses, { timeoutMs: 5_000 });
    for (let i = 0; i < 50 && !pair.seen.every((ids) => ids.includes("warm")); i++) {
      await catalog.getPet({ id: "1" }, { requestId: "warm" });
    }
    expect(pair.seen.every((ids) => ids.includes("warm"))).toBe(true);
    return catalog;
  }

  it.each(["FIN", "RST"] as const)(
    "a read on a replica whose connection ends (%s) is answered by the other, which gets the same request; the retry is reported",
    async (how) => {
      const pair = await startPair();
      const catalog = await connectedClient(pair);
      try {
        const retries: ReplicaRetry[] = [];
        const options = (requestId: string) => ({
          requestId,
          repeatable: true,
          onReplicaRetry: (r: ReplicaRetry) => retries.push(r),
        });
        // Two at once: round_robin sends one to each; the first replica holds its own.
        const answers = Promise.all([
          catalog.getPet({ id: "9001" }, options("req-a")),
          catalog.getPet({ id: "9002" }, options("req-b")),
        ]);
        await expect.poll(() => pair.held.length).toBe(1);
        const heldId = pair.seen[0]!.at(-1)!;
        pair.proxies[0]!.kill(how);
        expect((await answers).map((a) => a.pet!.id)).toEqual(["9001", "9002"]);
        // The held call reached the second replica too (its retry), with the same request id.
        expect(pair.seen[1]!.filter((id) => id === heldId)).toHaveLength(1);
        expect(retries).toHaveLength(1);
        expect(retries[0]).toMatchObject({
          method: CatalogServiceService.getPet.path,
          from: pair.proxies[0]!.address,
          to: pair.proxies[1]!.address,
          code: Status.OK,
        });
        expect(retries[0]!.error.code).toBe(Status.UNAVAILABLE);
      } finally {
        catalog.close();
        pair.close();
      }
    },
  );

  it("a call that is not repeatable (a mutation without a key) fails UNAVAILABLE and is not made again", async () => {
    const pair = await startPair();
    const catalog = await connectedClient(pair);
    try {
      const retries: ReplicaRetry[] = [];
      const onReplicaRetry = (r: ReplicaRetry) => retries.push(r);
      const outcomes = Promise.allSettled([
        catalog.getPet({ id: "9001" }, { requestId: "once-a", onReplicaRetry }),
        catalog.getPet({ id: "9002" }, { requestId: "once-b", onReplicaRetry }),
      ]);
      await expect.poll(() => pair.held.length).toBe(1);
      const heldId = pair.seen[0]!.at(-1)!;
      pair.proxies[0]!.kill("RST");
      const settled = await outcomes;
      const failed = settled.filter((s) => s.status === "rejected");
      expect(failed).toHaveLength(1);
      expect(((failed[0] as PromiseRejectedResult).reason as GrpcCallError).code).toBe(Status.UNAVAILABLE);
      expect(pair.seen[1]!.filter((id) => id === heldId)).toEqual([]);
      expect(retries).toEqual([]);
    } finally {
      catalog.close();
      pair.close();
    }
  });

  it("with no other replica ready, the call fails with its own failure (reported with no replica retried on)", async () => {
    const pair = await startPair();
    // Only the holding replica.
    const catalog = createClient(CatalogServiceService, pair.proxies[0]!.address, { timeoutMs: 5_000 });
    try {
      await catalog.getPet({ id: "1" }, { requestId: "warm" });
      const retries: ReplicaRetry[] = [];
      const call = catalog.getPet(
        { id: "9000" },
        { requestId: "alone", repeatable: true, onReplicaRetry: (r) => retries.push(r) },
      );
      await expect.poll(() => pair.held.length).toBe(1);
      pair.proxies[0]!.kill("RST");
      const error = await failure(call);
      expect(error.code).toBe(Status.UNAVAILABLE);
      expect(error.details).not.toBe(NO_OTHER_REPLICA);
      expect(retries).toHaveLength(1);
      expect(retries[0]).toMatchObject({ from: pair.proxies[0]!.address, to: undefined, code: Status.UNAVAILABLE });
    } finally {
      catalog.close();
      pair.close();
    }
  });

  it("a service's own answer is never repeated, even UNAVAILABLE: it carries an error-code", async () => {
    const seen: unknown[] = [];
    const unavailable = () =>
      startGrpcServer({
        host: "127.0.0.1",
        port: 0,
        instrumentation: createGrpcInstrumentation(pino({ level: "silent" }), new Registry()),
        services: [
          {
            definition: CatalogServiceService,
            implementation: {
              getPet(call: ServerUnaryCall<GetPetRequest, GetPetResponse>, callback: sendUnaryData<GetPetResponse>) {
                seen.push(call.metadata.get(REQUEST_ID_METADATA)[0]);
                const trailers = new Metadata();
                trailers.set(ERROR_CODE_METADATA, "service.unavailable");
                callback({ code: Status.UNAVAILABLE, details: "database unreachable", metadata: trailers });
              },
            },
          },
        ],
      });
    const replicas = await Promise.all([unavailable(), unavailable()]);
    const catalog = createClient(CatalogServiceService, replicas.map((r) => `127.0.0.1:${r.port}`).join(","), {
      timeoutMs: 5_000,
    });
    try {
      const error = await failure(catalog.getPet({ id: "1" }, { requestId: "own", repeatable: true }));
      expect(error.code).toBe(Status.UNAVAILABLE);
      expect(error.metadata.get(ERROR_CODE_METADATA)).toEqual(["service.unavailable"]);
      expect(seen).toEqual(["own"]);
    } finally {
      catalog.close();
      await Promise.all(replicas.map((r) => r.shutdown(1_000)));
    }
  });
});

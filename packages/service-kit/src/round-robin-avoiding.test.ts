import {
  Metadata,
  Server,
  ServerCredentials,
  status as Status,
  type Channel,
  type sendUnaryData,
  type ServerUnaryCall,
  type StatusObject,
} from "@grpc/grpc-js";
import { CatalogServiceService, type GetPetRequest, type GetPetResponse } from "@platform/proto/catalog/v1";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createChannel } from "./grpc-client.js";
import { AVOID_REPLICA_METADATA, NO_OTHER_REPLICA } from "./round-robin-avoiding.js";

/** What a replica saw of one call: which replica it is, and the avoid metadata if it arrived. */
interface Seen {
  replica: string;
  avoid: unknown;
}

/** A real grpc-js server on port 0 answering getPet, recording each call. */
async function startReplica(seen: Seen[]): Promise<{ server: Server; address: string }> {
  const server = new Server();
  let address = "";
  server.addService(CatalogServiceService, {
    getPet(call: ServerUnaryCall<GetPetRequest, GetPetResponse>, callback: sendUnaryData<GetPetResponse>) {
      seen.push({ replica: address, avoid: call.metadata.get(AVOID_REPLICA_METADATA)[0] });
      callback(null, { pet: { id: call.request.id, name: "Rex", categoryId: "1", status: 1 } });
    },
  });
  const port = await new Promise<number>((resolve, reject) =>
    server.bindAsync("127.0.0.1:0", ServerCredentials.createInsecure(), (error, bound) =>
      error ? reject(error) : resolve(bound),
    ),
  );
  address = `127.0.0.1:${port}`;
  return { server, address };
}

/** One getPet straight on the channel with these metadata (as the client's retry makes it). */
function getPet(channel: Channel, avoid?: string): Promise<StatusObject> {
  const metadata = new Metadata();
  if (avoid !== undefined) metadata.set(AVOID_REPLICA_METADATA, avoid);
  return new Promise((resolve) => {
    const call = channel.createCall(CatalogServiceService.getPet.path, Date.now() + 5_000, undefined, null, null);
    call.start(metadata, {
      onReceiveMetadata: () => undefined,
      onReceiveMessage: () => undefined,
      onReceiveStatus: resolve,
    });
    call.sendMessageWithContext({}, CatalogServiceService.getPet.requestSerialize({ id: "1" }));
    call.halfClose();
    call.startRead();
  });
}

describe("round_robin_avoiding: the clients' balancing, with a replica a call must not go to", () => {
  const seen: Seen[] = [];
  const replicas: { server: Server; address: string }[] = [];

  beforeAll(async () => {
    for (let i = 0; i < 3; i++) replicas.push(await startReplica(seen));
  });
  afterAll(() => {
    for (const { server } of replicas) server.forceShutdown();
  });

  /** A channel over the given replicas, once every one of them has answered a call (all connected). */
  async function connectedChannel(over: { address: string }[]): Promise<Channel> {
    const channel = createChannel(over.map((r) => r.address).join(","));
    const answered = new Set<string>();
    for (let i = 0; i < 50 && answered.size < over.length; i++) {
      const from = seen.length;
      expect((await getPet(channel)).code).toBe(Status.OK);
      answered.add(seen[from]!.replica);
    }
    expect(answered.size).toBe(over.length);
    return channel;
  }

  it("sends a call naming a replica to the other ready ones in turn, and the services never see the name", async () => {
    const channel = await connectedChannel(replicas);
    try {
      const [avoided, ...others] = replicas.map((r) => r.address) as [string, string, string];
      const from = seen.length;
      for (let i = 0; i < 30; i++) expect((await getPet(channel, avoided)).code).toBe(Status.OK);
      const calls = seen.slice(from);
      expect(calls.filter((c) => c.replica === avoided)).toEqual([]);
      expect(others.map((o) => calls.filter((c) => c.replica === o).length)).toEqual([15, 15]);
      expect(calls.filter((c) => c.avoid !== undefined)).toEqual([]);
      // Without a name, calls go round all three again.
      const plain = seen.length;
      for (let i = 0; i < 30; i++) await getPet(channel);
      expect(replicas.map((r) => seen.slice(plain).filter((c) => c.replica === r.address).length)).toEqual([
        10, 10, 10,
      ]);
    } finally {
      channel.close();
    }
  });

  it("fails the call at once, UNAVAILABLE, when the replica it names is the only one ready; a name the channel does not have changes nothing", async () => {
    const only = replicas[0]!;
    const channel = await connectedChannel([only]);
    try {
      const from = seen.length;
      const started = performance.now();
      const status = await getPet(channel, only.address);
      expect({ code: status.code, details: status.details }).toEqual({
        code: Status.UNAVAILABLE,
        details: NO_OTHER_REPLICA,
      });
      expect(performance.now() - started).toBeLessThan(500);
      expect(seen.length).toBe(from);
      expect((await getPet(channel, "127.0.0.1:1")).code).toBe(Status.OK);
      expect(seen.slice(from).map((c) => c.replica)).toEqual([only.address]);
    } finally {
      channel.close();
    }
  });
});

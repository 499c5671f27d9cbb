/**
 * bench:notify's reference (a), the server half: a bare grpc-js server with one unary method
 * that performs one INSERT transaction in Postgres. No service kit, no knex, no validation.
 * Run by bench/notify.ts only.
 */
import { Server, ServerCredentials, type ServiceDefinition } from "@grpc/grpc-js";
import pg from "pg";

const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL, max: 10 });
const json = {
  serialize: (value: unknown) => Buffer.from(JSON.stringify(value)),
  deserialize: (bytes: Buffer) => JSON.parse(bytes.toString("utf8")) as unknown,
};
const definition: ServiceDefinition = {
  send: {
    path: "/bench.Floor/Send",
    requestStream: false,
    responseStream: false,
    requestSerialize: json.serialize,
    requestDeserialize: json.deserialize,
    responseSerialize: json.serialize,
    responseDeserialize: json.deserialize,
  },
};
const server = new Server({ "grpc.enable_channelz": 0 });
server.addService(definition, {
  send: (
    call: { request: { key: string; body: string } },
    callback: (error: Error | null, value?: unknown) => void,
  ) => {
    pool
      .query<{ id: string; created_at: Date }>(
        "insert into bench_floor.sends (key, body) values ($1, $2) returning id, created_at",
        [call.request.key, call.request.body],
      )
      .then(
        ({ rows }) => callback(null, { id: rows[0]!.id, state: "sent", createdAt: rows[0]!.created_at }),
        (error: Error) => callback(error),
      );
  },
});
server.bindAsync("127.0.0.1:0", ServerCredentials.createInsecure(), (error, port) => {
  if (error) throw error;
  process.stdout.write(`${JSON.stringify({ msg: "listening", service: "notify-floor-grpc", grpcPort: port })}\n`);
});
process.on("SIGTERM", () => server.tryShutdown(() => void pool.end().then(() => process.exit(0))));

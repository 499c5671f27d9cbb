/**
 * bench:notify's reference (a), the HTTP half: a bare Koa process that reads the JSON body and
 * makes one plain grpc-js unary call (to notify-floor-grpc-server.ts), then answers its result.
 * No authentication, rate limits, problem details or idempotency. Run by bench/notify.ts only.
 */
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { Client, credentials } from "@grpc/grpc-js";
import Koa from "koa";
import getRawBody from "raw-body";

const client = new Client(process.env.FLOOR_GRPC_ADDR!, credentials.createInsecure(), { "grpc.enable_channelz": 0 });
const app = new Koa();
app.use(async (ctx) => {
  const body = await getRawBody(ctx.req, { encoding: "utf8", limit: 1024 * 1024 });
  JSON.parse(body); // the same parsing work as a real route
  const key = ctx.get("idempotency-key");
  ctx.body = await new Promise((resolve, reject) => {
    client.makeUnaryRequest(
      "/bench.Floor/Send",
      (value: unknown) => Buffer.from(JSON.stringify(value)),
      (bytes: Buffer) => JSON.parse(bytes.toString("utf8")) as unknown,
      { key, body },
      { deadline: Date.now() + 5_000 },
      (error, value) => (error ? reject(error) : resolve(value)),
    );
  });
});
const server = createServer(app.callback());
server.keepAliveTimeout = 65_000;
server.listen(0, "127.0.0.1", () => {
  process.stdout.write(
    `${JSON.stringify({ msg: "listening", service: "notify-floor-koa", port: (server.address() as AddressInfo).port })}\n`,
  );
});
process.on("SIGTERM", () => {
  server.close(() => {
    client.close();
    process.exit(0);
  });
});

/**
 * bench:notify's floor (c), the HTTP half: a bare Koa process serving the same request as the
 * gateway's POST /api/v1/tenants/{id}/notifications: the API key (Authorization: Bearer) checked
 * by a plain SHA-256 digest looked up in a Map (FLOOR_C_API_KEY, the one key it accepts, for the
 * tenant FLOOR_C_TENANT), the Idempotency-Key header required, the JSON body parsed; then one plain
 * grpc-js unary call to notify-floor-c-grpc-server.ts and its result answered as JSON (409 when
 * the key was used for another request). Nothing of ours. Run by bench/notify.ts only.
 */
import { createHash } from "node:crypto";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { Client, credentials } from "@grpc/grpc-js";
import Koa from "koa";
import getRawBody from "raw-body";

const digest = (key: string) => createHash("sha256").update(key).digest("hex");
const keys = new Map([[digest(process.env.FLOOR_C_API_KEY!), { tenantIds: [process.env.FLOOR_C_TENANT!] }]]);
const route = /^\/api\/v1\/tenants\/([^/]+)\/notifications$/;
const client = new Client(process.env.FLOOR_C_GRPC_ADDR!, credentials.createInsecure(), { "grpc.enable_channelz": 0 });

const app = new Koa();
app.use(async (ctx) => {
  const tenantId = route.exec(ctx.path)?.[1];
  if (ctx.method !== "POST" || !tenantId) return ctx.throw(404);
  const bearer = /^Bearer (.+)$/.exec(ctx.get("authorization"))?.[1];
  const apiKey = bearer === undefined ? undefined : keys.get(digest(bearer));
  if (!apiKey) return ctx.throw(401);
  if (!apiKey.tenantIds.includes(tenantId)) return ctx.throw(403);
  const key = ctx.get("idempotency-key");
  if (!key) return ctx.throw(400, "Idempotency-Key is required");
  const body = JSON.parse(await getRawBody(ctx.req, { encoding: "utf8", limit: 1024 * 1024 })) as unknown;
  const result = await new Promise<{ refused?: number }>((resolve, reject) => {
    client.makeUnaryRequest(
      "/bench.FloorC/Send",
      (value: unknown) => Buffer.from(JSON.stringify(value)),
      (bytes: Buffer) => JSON.parse(bytes.toString("utf8")) as { refused?: number },
      { tenantId, key, body },
      { deadline: Date.now() + 5_000 },
      (error, value) => (error ? reject(error) : resolve(value!)),
    );
  });
  if (result.refused) return ctx.throw(result.refused);
  ctx.body = result;
});
const server = createServer(app.callback());
server.keepAliveTimeout = 65_000;
server.listen(0, "127.0.0.1", () => {
  process.stdout.write(
    `${JSON.stringify({ msg: "listening", service: "notify-floor-c-koa", port: (server.address() as AddressInfo).port })}\n`,
  );
});
process.on("SIGTERM", () => {
  server.close(() => {
    client.close();
    process.exit(0);
  });
});

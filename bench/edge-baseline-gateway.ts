/**
 * The edge benchmark's baseline: the same tenant GET route handler and the same gRPC client to
 * notify, in a Koa app with the edge switched off (no request id, metrics, error mapping, rate
 * limit, authentication or authorization). Never deployed; run by bench/edge.ts only.
 */
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import Koa from "koa";
import Router from "@koa/router";
import { createNotifyClient } from "@platform/gateway/grpc/notify-client";
import { createProjectionClient } from "@platform/gateway/grpc/projection-client";
import { createWebhooksClient } from "@platform/gateway/grpc/webhooks-client";
import { tenantRoutes } from "@platform/gateway/routes/index";

const route = tenantRoutes.find((r) => r.operationId === "getTenant")!;
const notify = createNotifyClient(process.env.NOTIFY_ADDR ?? "127.0.0.1:50052", 5_000);
const router = new Router();
// getTenant never calls webhooks; the client is there because every route gets the same deps.
const webhooks = createWebhooksClient(process.env.WEBHOOKS_ADDR ?? "127.0.0.1:50053", 5_000);
const projections = createProjectionClient(process.env.NOTIFY_ADDR ?? "127.0.0.1:50052", 5_000);
router.register(route.path, [route.method], [(ctx) => route.handle(ctx, { notify, webhooks, projections })]);
const app = new Koa();
app.use(async (ctx, next) => {
  ctx.state.requestId = "bench";
  await next();
});
app.use(router.routes());
const server = createServer(app.callback());
server.listen(0, "127.0.0.1", () => {
  process.stdout.write(
    `${JSON.stringify({ msg: "listening", service: "edge-baseline", port: (server.address() as AddressInfo).port })}\n`,
  );
});
process.on("SIGTERM", () => {
  notify.close();
  webhooks.close();
  projections.close();
  server.close(() => process.exit(0));
});

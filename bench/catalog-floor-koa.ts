/**
 * The catalog benchmark's floor, HTTP half: a bare Koa process with one handler that makes one
 * plain grpc-js unary call (the generated client, no interceptors) to bench/catalog-floor-grpc.ts
 * and answers the pets as JSON. No auth, rate limit, request id, logging, metrics or router.
 * Env: CATALOG_ADDR. Run by bench/catalog.ts only.
 */
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { credentials } from "@grpc/grpc-js";
import Koa from "koa";
import { CatalogServiceClient, PetStatus, type ListPetsResponse } from "@platform/proto/catalog/v1";

const client = new CatalogServiceClient(process.env.CATALOG_ADDR ?? "", credentials.createInsecure(), {
  "grpc.enable_channelz": 0,
});
const statusFromProto: Partial<Record<PetStatus, string>> = {
  [PetStatus.PET_STATUS_AVAILABLE]: "available",
  [PetStatus.PET_STATUS_PENDING]: "pending",
  [PetStatus.PET_STATUS_SOLD]: "sold",
};

const app = new Koa();
app.use(async (ctx) => {
  const pageSize = Math.min(100, Math.max(1, Number(ctx.query.limit ?? 20)));
  const response = await new Promise<ListPetsResponse>((resolve, reject) =>
    client.listPets({ pageSize, status: PetStatus.PET_STATUS_UNSPECIFIED, pageToken: "" }, (error, value) =>
      error ? reject(error) : resolve(value),
    ),
  );
  ctx.body = response.pets.map((p) => ({
    id: Number(p.id),
    name: p.name,
    categoryId: Number(p.categoryId),
    status: statusFromProto[p.status],
  }));
});
const server = createServer(app.callback());
server.listen(0, "127.0.0.1", () => {
  process.stdout.write(
    `${JSON.stringify({ msg: "listening", service: "catalog-floor-koa", port: (server.address() as AddressInfo).port })}\n`,
  );
});
process.on("SIGTERM", () => {
  server.close(() => {
    client.close();
    process.exit(0);
  });
});

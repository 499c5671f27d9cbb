/**
 * The catalog benchmark's floor, server half: a bare grpc-js server with the generated
 * catalog.v1.CatalogService definition whose ListPets runs the baseline's SQL with pg and returns
 * the rows. No interceptor, no metrics, no logging, no knex, no domain code: what any gRPC hop to
 * Postgres costs on this machine. Run by bench/catalog.ts only (with bench/catalog-floor-koa.ts).
 */
import { Server, ServerCredentials, type UntypedServiceImplementation } from "@grpc/grpc-js";
import pg from "pg";
import {
  CatalogServiceService,
  PetStatus,
  type ListPetsRequest,
  type ListPetsResponse,
} from "@platform/proto/catalog/v1";

const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL, max: 10 });
const statusToProto: Record<string, PetStatus> = {
  available: PetStatus.PET_STATUS_AVAILABLE,
  pending: PetStatus.PET_STATUS_PENDING,
  sold: PetStatus.PET_STATUS_SOLD,
};

const implementation: UntypedServiceImplementation = {
  listPets(call: { request: ListPetsRequest }, callback: (error: Error | null, response?: ListPetsResponse) => void) {
    const limit = call.request.pageSize || 20;
    pool
      .query<{ id: string; name: string; category_id: string; status: string }>(
        "select id, name, category_id, status from catalog.pets order by id asc limit $1",
        [limit + 1],
      )
      .then(
        ({ rows }) =>
          callback(null, {
            pets: rows.slice(0, limit).map((r) => ({
              id: r.id,
              name: r.name,
              categoryId: r.category_id,
              status: statusToProto[r.status] ?? PetStatus.PET_STATUS_UNSPECIFIED,
            })),
            nextPageToken: "",
          }),
        (error: Error) => callback(error),
      );
  },
};

// The one channel option the service kit sets everywhere (channelz off), so the floor and the
// measured path differ by our code only, not by a grpc-js setting.
const server = new Server({ "grpc.enable_channelz": 0 });
server.addService(CatalogServiceService, implementation);
server.bindAsync("127.0.0.1:0", ServerCredentials.createInsecure(), (error, port) => {
  if (error) throw error;
  process.stdout.write(`${JSON.stringify({ msg: "listening", service: "catalog-floor-grpc", grpcPort: port })}\n`);
});
process.on("SIGTERM", () => {
  server.tryShutdown(() => void pool.end().then(() => process.exit(0)));
});

/**
 * The catalog benchmark's baseline: one Koa process answering GET /v1/pets?limit=20 with the same
 * keyset SQL the catalog service runs, straight from pg: no gateway, no gRPC, no auth.
 * Run by bench/catalog.ts only.
 */
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import Koa from "koa";
import pg from "pg";

const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL, max: 10 });
const app = new Koa();
app.use(async (ctx) => {
  const limit = Math.min(100, Math.max(1, Number(ctx.query.limit ?? 20)));
  const { rows } = await pool.query<{ id: string; name: string; category_id: string; status: string }>(
    "select id, name, category_id, status from catalog.pets order by id asc limit $1",
    [limit + 1],
  );
  ctx.body = rows
    .slice(0, limit)
    .map((r) => ({ id: Number(r.id), name: r.name, categoryId: Number(r.category_id), status: r.status }));
});
const server = createServer(app.callback());
server.listen(0, "127.0.0.1", () => {
  process.stdout.write(
    `${JSON.stringify({ msg: "listening", service: "catalog-baseline", port: (server.address() as AddressInfo).port })}\n`,
  );
});
process.on("SIGTERM", () => {
  server.close(() => void pool.end().then(() => process.exit(0)));
});

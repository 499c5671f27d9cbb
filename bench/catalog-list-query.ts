/**
 * node bench/dist/catalog-list-query.js — what the catalog's list query costs this process per
 * call, two ways on the same knex pool, same SQL and rows, alternating in one run:
 *
 *   knex:      db.raw(sql with ? placeholders, bindings)  (the catalog's hot path until issue 6)
 *   queryRows: the same statement ($n placeholders) on a pooled pg connection (service kit)
 *
 * Both run the one-statement form the catalog used from issue 6 to issue 19 (unnamed, "$1 is null
 * or ..." filters); the catalog now runs two prepared statements (services/catalog/src/db/pet-repository.ts).
 *
 * Prints CPU microseconds per query (process.cpuUsage, user + system) per round and the median
 * queryRows/knex ratio. Env: BENCH_QUERIES per round (default 3000), BENCH_ROUNDS (default 6).
 */
import { createScratchDatabase } from "@platform/local-stack/postgres-databases";
import { createDatabase, queryRows } from "@platform/service-kit/postgres";

const queriesPerRound = Number(process.env.BENCH_QUERIES ?? 3000);
const rounds = Number(process.env.BENCH_ROUNDS ?? 6);
const concurrency = 10; // the pool size: every connection busy, as under load

const knexSql = `select id, name, category_id, status from pets
  where (?::text is null or status = ?::text) and (?::bigint is null or id > ?::bigint)
  order by id asc limit ?`;
const pgSql = `select id, name, category_id, status from pets
  where ($1::text is null or status = $1::text) and ($2::bigint is null or id > $2::bigint)
  order by id asc limit $3`;

async function main() {
  const scratch = await createScratchDatabase("benchlistquery");
  const db = createDatabase({ url: scratch.url, schema: "catalog", poolMax: concurrency });
  try {
    await db.raw("create schema catalog");
    await db.raw(`create table catalog.pets (id bigserial primary key, name text not null,
      category_id bigint not null, status text not null)`);
    await db.raw(`insert into catalog.pets (name, category_id, status)
      select 'pet-' || i, 1 + i % 50, (array['available','pending','sold'])[1 + i % 3]
      from generate_series(1, 10000) as i`);
    await db.raw("analyze catalog.pets");
    const ways = {
      knex: async () => (await db.raw<{ rows: unknown[] }>(knexSql, [null, null, null, null, 21])).rows,
      queryRows: () => queryRows(db, pgSql, [null, null, 21]),
    };
    const [a, b] = await Promise.all([ways.knex(), ways.queryRows()]);
    if (JSON.stringify(a) !== JSON.stringify(b)) throw new Error("the two ways answer different rows");

    const measure = async (run: () => Promise<unknown[]>) => {
      let left = queriesPerRound;
      const worker = async () => {
        while (left-- > 0) await run();
      };
      const before = process.cpuUsage();
      await Promise.all(Array.from({ length: concurrency }, worker));
      const used = process.cpuUsage(before);
      return (used.user + used.system) / queriesPerRound;
    };
    await measure(ways.knex); // warm-up (JIT, pool connections), not counted
    await measure(ways.queryRows);
    const ratios: number[] = [];
    for (let round = 0; round < rounds; round++) {
      const knexUs = await measure(ways.knex);
      const queryRowsUs = await measure(ways.queryRows);
      ratios.push(queryRowsUs / knexUs);
      console.log(
        `round ${round + 1}: knex ${knexUs.toFixed(1)} µs/query, queryRows ${queryRowsUs.toFixed(1)} µs/query, ` +
          `ratio ${(queryRowsUs / knexUs).toFixed(3)}`,
      );
    }
    const sorted = [...ratios].sort((x, y) => x - y);
    const median =
      sorted.length % 2
        ? sorted[(sorted.length - 1) / 2]!
        : (sorted[sorted.length / 2 - 1]! + sorted[sorted.length / 2]!) / 2;
    console.log(`queryRows/knex CPU per query: median ${median.toFixed(3)} over ${rounds} rounds`);
  } finally {
    await db.destroy();
    await scratch.drop();
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});

import { createScratchDatabase, type ScratchDatabase } from "@platform/local-stack/postgres-databases";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  createDatabase,
  inTransaction,
  isTransientDatabaseError,
  queryPrepared,
  queryRows,
  type Knex,
} from "../src/postgres.js";

const SCHEMA = "query_rows_test";

describe("queryRows (real Postgres)", () => {
  let scratch: ScratchDatabase;
  let db: Knex;

  beforeAll(async () => {
    scratch = await createScratchDatabase("queryrows");
    db = createDatabase({ url: scratch.url, schema: SCHEMA, poolMax: 2 });
    await db.raw("create schema ??", [SCHEMA]);
    await db.schema.withSchema(SCHEMA).createTable("things", (t) => {
      t.bigIncrements("id");
      t.text("name");
    });
    await db("things").insert([{ name: "a" }, { name: "b" }, { name: "c" }]);
  });

  afterAll(async () => {
    await db?.destroy();
    await scratch?.drop();
  });

  it("runs $n-parameterised SQL in the service's schema (search_path) and returns the rows", async () => {
    const rows = await queryRows<{ id: string; name: string }>(
      db,
      "select id, name from things where name <> $1 order by id limit $2",
      ["b", 10],
    );
    expect(rows).toEqual([
      { id: "1", name: "a" },
      { id: "3", name: "c" },
    ]);
  });

  it("queryPrepared: a knex-built statement runs as a named prepared statement, one per distinct text", async () => {
    const byName = (name?: string) => {
      const query = db("things").select("id", "name").orderBy("id").limit(10);
      return name === undefined ? query : query.where("name", name);
    };
    expect(await queryPrepared<{ id: string; name: string }>(db, byName("b"))).toEqual([{ id: "2", name: "b" }]);
    expect(await queryPrepared<{ id: string; name: string }>(db, byName("c"))).toEqual([{ id: "3", name: "c" }]);
    expect(await queryPrepared(db, byName())).toHaveLength(3);
    // On a pool of one connection: the two texts (with and without the filter) are two prepared
    // statements of that connection, the second value of the same text reused the first's.
    const single = createDatabase({ url: scratch.url, schema: SCHEMA, poolMax: 1 });
    try {
      await queryPrepared(single, byName("a"));
      await queryPrepared(single, byName("b"));
      await queryPrepared(single, byName());
      const prepared = await queryRows<{ name: string; statement: string }>(
        single,
        "select name, statement from pg_prepared_statements where name like 'k\\_%' order by statement",
        [],
      );
      expect(prepared).toHaveLength(2);
      for (const p of prepared) expect(p.name).toMatch(/^k_[A-Za-z0-9_-]{24}$/);
      expect(prepared[1]!.statement).toContain('where "name" = $1');
    } finally {
      await single.destroy();
    }
  });

  it("gives every connection back to the pool, after successes and failures alike", async () => {
    // Pool of 2: forty queries (half failing) only complete if each one released its connection.
    const outcomes = await Promise.allSettled(
      Array.from({ length: 40 }, (_, i) => queryRows(db, i % 2 ? "select nope from things" : "select 1 as one", [])),
    );
    expect(outcomes.filter((o) => o.status === "fulfilled")).toHaveLength(20);
    await expect(db.raw("select 1")).resolves.toBeDefined();
  });

  it("rejects with pg's error (SQLSTATE kept), not a transient one", async () => {
    const error = await queryRows(db, "select nope from things", []).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: "42703" });
    expect(isTransientDatabaseError(error)).toBe(false);
  });

  it("counts a transaction Postgres rolled back to break a deadlock as transient (retry), not as a bug", async () => {
    // Two transactions lock rows 1 and 3 in opposite orders: Postgres aborts one with 40P01.
    const locker = (first: number, second: number) =>
      db.transaction(async (trx) => {
        await trx("things").where({ id: first }).update({ name: "x" });
        await new Promise((resolve) => setTimeout(resolve, 200));
        await trx("things").where({ id: second }).update({ name: "y" });
      });
    const outcomes = await Promise.allSettled([locker(1, 3), locker(3, 1)]);
    const failures = outcomes.flatMap((o) => (o.status === "rejected" ? [o.reason as unknown] : []));
    expect(failures).toHaveLength(1);
    expect(failures[0]).toMatchObject({ code: "40P01" });
    expect(isTransientDatabaseError(failures[0])).toBe(true);
    expect(isTransientDatabaseError({ code: "40001" })).toBe(true);
    expect(isTransientDatabaseError({ code: "23505" })).toBe(false);
  });

  it("counts Postgres refusing a connection for want of slots (53300, too many connections) as transient", async () => {
    // A role limited to one connection: its second is refused with the SQLSTATE a server at
    // max_connections answers, without exhausting the shared server's slots (superusers are exempt
    // from such limits, hence a plain role).
    const role = `connlimit_${process.pid}_${Date.now()}`;
    const admin = new pg.Client({ connectionString: scratch.url });
    await admin.connect();
    const asRole = new URL(scratch.url);
    asRole.username = role;
    asRole.password = "";
    const holder = new pg.Client({ connectionString: asRole.toString() });
    const refused = new pg.Client({ connectionString: asRole.toString() });
    try {
      await admin.query(`create role "${role}" login connection limit 1`);
      await holder.connect();
      const error = await refused.connect().catch((e: unknown) => e);
      expect(error).toMatchObject({ code: "53300" });
      expect(isTransientDatabaseError(error)).toBe(true);
      expect(isTransientDatabaseError({ code: "53100" })).toBe(false); // disk full: not a retry
    } finally {
      await holder.end().catch(() => undefined);
      await refused.end().catch(() => undefined);
      await admin.query(`drop role if exists "${role}"`);
      await admin.end();
    }
  });
});

describe("inTransaction on a pipelined pg.Pool (real Postgres)", () => {
  let scratch: ScratchDatabase;
  let pool: pg.Pool;

  beforeAll(async () => {
    scratch = await createScratchDatabase("intx");
    pool = new pg.Pool({ connectionString: scratch.url, max: 1, pipeline: true });
    await pool.query("create table things (id int primary key, name text)");
  });

  afterAll(async () => {
    await pool?.end();
    await scratch?.drop();
  });

  /** Writes to the connection's socket during `body` (the pool holds one connection). */
  async function writesDuring(body: () => Promise<unknown>): Promise<number> {
    type WriteFn = (this: unknown, ...args: unknown[]) => void;
    const client = await pool.connect();
    const stream = client.connection.stream as unknown as { _write: WriteFn; _writev?: WriteFn };
    client.release();
    let writes = 0;
    const counted = (original: WriteFn): WriteFn =>
      function (this: unknown, ...args: unknown[]) {
        writes += 1;
        original.apply(this, args);
      };
    const { _write: write, _writev: writev } = stream;
    stream._write = counted(write);
    if (writev) stream._writev = counted(writev);
    try {
      await body();
    } finally {
      stream._write = write;
      if (writev) stream._writev = writev;
    }
    return writes;
  }

  it("sends BEGIN with the first statement in one write, and COMMIT only after its answer", async () => {
    const writes = await writesDuring(() =>
      inTransaction(pool, (run) => run("insert into things (id, name) values ($1, $2)", [1, "a"])),
    );
    // BEGIN + INSERT, then COMMIT: two writes (three when BEGIN waits for its own answer).
    expect(writes).toBe(2);
    expect((await pool.query("select name from things where id = 1")).rows).toEqual([{ name: "a" }]);
  });

  it("runs the first statement inside the transaction: an error after it rolls it back", async () => {
    const error = await inTransaction(pool, async (run) => {
      await run("insert into things (id, name) values ($1, $2)", [2, "b"]);
      await run("insert into things (id, name) values ($1, $2)", [1, "duplicate"]);
    }).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: "23505" });
    expect((await pool.query("select count(*)::int as n from things where id = 2")).rows).toEqual([{ n: 0 }]);
    // The connection went back clean: the next transaction commits.
    await inTransaction(pool, (run) => run("insert into things (id, name) values ($1, $2)", [3, "c"]));
    expect((await pool.query("select count(*)::int as n from things")).rows).toEqual([{ n: 2 }]);
  });
});

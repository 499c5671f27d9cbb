import { createScratchDatabase, type ScratchDatabase } from "@platform/local-stack/postgres-databases";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createDatabase, isTransientDatabaseError, queryRows, type Knex } from "../src/postgres.js";

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
});

import type { Knex } from "knex";
import { describe, expect, it } from "vitest";
import { databaseCheck } from "./database-check.js";

/** A knex stand-in whose `raw` answers as told, counting the queries it was sent. */
function fakeDatabase(answer: () => Promise<unknown>) {
  let queries = 0;
  const db = {
    raw: () => {
      queries += 1;
      return answer();
    },
  } as unknown as Knex;
  return {
    db,
    get queries() {
      return queries;
    },
  };
}

describe("databaseCheck", () => {
  it("is SERVING when select 1 answers, UNREACHABLE when it fails", async () => {
    expect(await databaseCheck(fakeDatabase(() => Promise.resolve({ rows: [] })).db)(1_000)).toBe("SERVING");
    expect(await databaseCheck(fakeDatabase(() => Promise.reject(new Error("ECONNREFUSED"))).db)(1_000)).toBe(
      "UNREACHABLE",
    );
  });

  it("is UNREACHABLE at the deadline while Postgres does not answer, and never has two queries in flight", async () => {
    let answer: (value: unknown) => void = () => undefined;
    const database = fakeDatabase(() => new Promise((resolve) => (answer = resolve)));
    const check = databaseCheck(database.db);
    const started = performance.now();
    expect(await check(50)).toBe("UNREACHABLE");
    expect(performance.now() - started).toBeLessThan(1_000);
    // The next checks wait on the same query instead of queueing more on the pool.
    expect(await check(20)).toBe("UNREACHABLE");
    expect(database.queries).toBe(1);
    const next = check(5_000);
    answer({ rows: [] });
    expect(await next).toBe("SERVING");
    expect(database.queries).toBe(1);
    // Once it answered, the next check sends a new query.
    const after = check(5_000);
    answer({ rows: [] });
    expect(await after).toBe("SERVING");
    expect(database.queries).toBe(2);
  });
});

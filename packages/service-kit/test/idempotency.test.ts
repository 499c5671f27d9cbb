import { createScratchDatabase, type ScratchDatabase } from "@platform/local-stack/postgres-databases";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { DomainError } from "../src/errors.js";
import {
  createIdempotencyTable,
  fingerprintOf,
  IdempotencyInProgressError,
  IdempotencyKeyReusedError,
  purgeExpiredIdempotencyKeys,
  runIdempotently,
  type IdempotencyOptions,
} from "../src/idempotency.js";
import { createDatabase, type Knex } from "../src/postgres.js";

const SCHEMA = "idempotency_test";

describe("runIdempotently (real Postgres)", () => {
  let scratch: ScratchDatabase;
  let db: Knex;
  let n = 0;
  const key = () => `key-${Date.now()}-${n++}`;
  const options: IdempotencyOptions = { ttlMs: 60_000, leaseMs: 60_000 };

  /** The effect under test: one row in `effects` per execution. */
  const addEffect = (scope: string, payload: string) => async (trx: Knex.Transaction) => {
    const [row] = await trx("effects").insert({ scope, payload }).returning<{ id: number }[]>("id");
    return { effectId: row!.id, payload };
  };
  const effectCount = async (scope: string) =>
    Number((await db("effects").where({ scope }).count<{ n: string }[]>({ n: "*" }))[0]!.n);

  beforeAll(async () => {
    scratch = await createScratchDatabase("idem");
    db = createDatabase({ url: scratch.url, schema: SCHEMA, poolMax: 30 });
    await db.raw("create schema ??", [SCHEMA]);
    await createIdempotencyTable(db);
    await db.schema.createTable("effects", (t) => {
      t.increments("id");
      t.text("scope");
      t.text("payload");
    });
  });
  afterAll(async () => {
    await db?.destroy();
    await scratch?.drop();
  });
  let scope: string;
  beforeEach(() => {
    scope = `tenant-${n++}`;
  });

  it("applies a new command once and replays its result on a repeat", async () => {
    const command = { scope, key: key(), fingerprint: fingerprintOf("op", "body") };
    const first = await runIdempotently(db, command, addEffect(scope, "a"), options);
    const again = await runIdempotently(db, command, addEffect(scope, "a"), options);
    expect(first.replayed).toBe(false);
    expect(again).toEqual({ result: first.result, replayed: true });
    expect(await effectCount(scope)).toBe(1);
  });

  it("scopes keys: the same key under another scope is another command", async () => {
    const k = key();
    await runIdempotently(db, { scope, key: k, fingerprint: "f" }, addEffect(scope, "a"), options);
    const other = await runIdempotently(db, { scope: `${scope}-b`, key: k, fingerprint: "f" }, addEffect(scope, "a"));
    expect(other.replayed).toBe(false);
    expect(await effectCount(scope)).toBe(2);
  });

  it("refuses the same key with a different request", async () => {
    const k = key();
    await runIdempotently(db, { scope, key: k, fingerprint: fingerprintOf("op", "one") }, addEffect(scope, "1"));
    await expect(
      runIdempotently(db, { scope, key: k, fingerprint: fingerprintOf("op", "two") }, addEffect(scope, "2")),
    ).rejects.toBeInstanceOf(IdempotencyKeyReusedError);
    expect(await effectCount(scope)).toBe(1);
  });

  it("answers in_progress to a repeat while the first is still running", async () => {
    const command = { scope, key: key(), fingerprint: "f" };
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const first = runIdempotently(
      db,
      command,
      async (trx) => {
        await gate;
        return addEffect(scope, "slow")(trx);
      },
      options,
    );
    await expect.poll(() => db("idempotency_keys").where({ scope }).first()).toBeDefined();
    await expect(runIdempotently(db, command, addEffect(scope, "x"), options)).rejects.toBeInstanceOf(
      IdempotencyInProgressError,
    );
    release();
    expect((await first).replayed).toBe(false);
    expect((await runIdempotently(db, command, addEffect(scope, "x"), options)).replayed).toBe(true);
    expect(await effectCount(scope)).toBe(1);
  });

  it("gives exactly one effect for 20 concurrent repeats", async () => {
    const command = { scope, key: key(), fingerprint: "f" };
    const outcomes = await Promise.allSettled(
      Array.from({ length: 20 }, () => runIdempotently(db, command, addEffect(scope, "c"), options)),
    );
    expect(await effectCount(scope)).toBe(1);
    const applied = outcomes.filter((o) => o.status === "fulfilled" && !o.value.replayed);
    expect(applied).toHaveLength(1);
    for (const outcome of outcomes) {
      if (outcome.status === "rejected") expect(outcome.reason).toBeInstanceOf(IdempotencyInProgressError);
      else
        expect(outcome.value.result).toEqual((applied[0] as PromiseFulfilledResult<{ result: unknown }>).value.result);
    }
    const after = await runIdempotently(db, command, addEffect(scope, "c"), options);
    expect(after.replayed).toBe(true);
  });

  it("releases the key when the effect is refused, so a later retry can apply", async () => {
    const command = { scope, key: key(), fingerprint: "f" };
    const refuse = () => Promise.reject(new DomainError("failed_precondition", "partner.channel_not_ready", "no"));
    await expect(runIdempotently(db, command, refuse, options)).rejects.toMatchObject({
      code: "partner.channel_not_ready",
    });
    expect((await runIdempotently(db, command, addEffect(scope, "later"), options)).replayed).toBe(false);
    expect(await effectCount(scope)).toBe(1);
  });

  it("after a crash mid-effect: no effect, repeats wait out the lease, then one retry applies", async () => {
    const short = { ttlMs: 60_000, leaseMs: 1_500 };
    const command = { scope, key: key(), fingerprint: "f" };
    const crash = async (trx: Knex.Transaction) => {
      await addEffect(scope, "lost")(trx);
      throw new Error("process killed"); // not a DomainError: the claim stays, as after kill -9
    };
    await expect(runIdempotently(db, command, crash, short)).rejects.toThrow("process killed");
    expect(await effectCount(scope)).toBe(0);
    await expect(runIdempotently(db, command, addEffect(scope, "x"), short)).rejects.toBeInstanceOf(
      IdempotencyInProgressError,
    );
    await new Promise((resolve) => setTimeout(resolve, 1_600));
    expect((await runIdempotently(db, command, addEffect(scope, "retry"), short)).replayed).toBe(false);
    expect(await effectCount(scope)).toBe(1);
  });

  it("never completes twice when a slow first attempt outlives its lease and is taken over", async () => {
    const short = { ttlMs: 60_000, leaseMs: 150 };
    const command = { scope, key: key(), fingerprint: "f" };
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const slow = runIdempotently(
      db,
      command,
      async (trx) => {
        const result = await addEffect(scope, "slow")(trx);
        await gate; // still working when its lease runs out
        return result;
      },
      short,
    );
    await expect.poll(() => db("idempotency_keys").where({ scope, key: command.key }).first()).toBeDefined();
    await new Promise((resolve) => setTimeout(resolve, 300));
    const takeover = await runIdempotently(db, command, addEffect(scope, "takeover"), short);
    expect(takeover.replayed).toBe(false);
    release();
    await expect(slow).rejects.toBeInstanceOf(IdempotencyInProgressError);
    expect(await db("effects").where({ scope }).pluck("payload")).toEqual(["takeover"]);
  });

  it("forgets keys after the TTL: purged, and an expired key applies anew", async () => {
    const brief = { ttlMs: 100, leaseMs: 60_000 };
    const k1 = { scope, key: key(), fingerprint: "f" };
    const k2 = { scope, key: key(), fingerprint: "f" };
    await runIdempotently(db, k1, addEffect(scope, "1"), brief);
    await runIdempotently(db, k2, addEffect(scope, "2"), brief);
    await new Promise((resolve) => setTimeout(resolve, 200));
    // Expired but not yet purged: still a new command.
    expect((await runIdempotently(db, k1, addEffect(scope, "1 again"), options)).replayed).toBe(false);
    expect(await purgeExpiredIdempotencyKeys(db)).toBeGreaterThanOrEqual(1);
    expect(await db("idempotency_keys").where({ scope, key: k2.key }).first()).toBeUndefined();
    expect(await db("idempotency_keys").where({ scope, key: k1.key }).first()).toBeDefined();
    expect(await effectCount(scope)).toBe(3);
  });
});

import { setTimeout as sleep } from "node:timers/promises";
import { createScratchDatabase, type ScratchDatabase } from "@platform/local-stack/postgres-databases";
import { createDatabase, migrateToLatest, type Knex } from "@platform/service-kit/postgres";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { migrations } from "../migrations/index.js";
import { GATEWAY_SCHEMA } from "../src/config.js";
import { createConsoleLinks } from "../src/db/console-links.js";
import { createConsoleStore, type ConsoleStore } from "../src/db/console-store.js";
import { digestConsoleToken, issueConsoleToken } from "../src/domain/console-token.js";

/** The console's statements on real Postgres: the edges the HTTP tests do not reach in time. */
describe("console store (real Postgres)", () => {
  let scratch: ScratchDatabase;
  let db: Knex;
  let store: ConsoleStore;
  const limits = { idleMs: 60_000, absoluteMs: 3_600_000 };

  const user = async (email: string, tenantId = "t_1") =>
    store.createUser({
      tenantId,
      email,
      role: "admin",
      invitationDigest: digestConsoleToken(issueConsoleToken()),
      invitationTtlMs: 60_000,
    });

  beforeAll(async () => {
    scratch = await createScratchDatabase("gwconsole");
    db = createDatabase({ url: scratch.url, schema: GATEWAY_SCHEMA, poolMax: 4 });
    await migrateToLatest(db, GATEWAY_SCHEMA, migrations);
    store = createConsoleStore(db);
  });
  afterAll(async () => {
    await db?.destroy();
    await scratch?.drop();
  });

  it("counts attempts per key in fixed windows: concurrent attempts are all counted, a new window starts at 1", async () => {
    const counts = await Promise.all(
      Array.from({ length: 10 }, () => store.countAttempt(["account:t_1:a@example.com", "address:10.0.0.1"], 300)),
    );
    const accountCounts = counts.map((c) => c.find((k) => k.key === "account:t_1:a@example.com")!.attempts);
    expect(accountCounts.sort((a, b) => a - b)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
    expect(counts[0]![0]!.windowLeftMs).toBeLessThanOrEqual(300);
    await sleep(350);
    const [fresh] = await store.countAttempt(["account:t_1:a@example.com"], 300);
    expect(fresh!.attempts).toBe(1);
    // A good password: the account's count goes, the address gets its attempt back.
    await store.forgiveAttempt("account:t_1:a@example.com", "address:10.0.0.1");
    const rows = await db("console_login_throttle").select("key", "attempts").orderBy("key");
    expect(rows).toEqual([{ key: "address:10.0.0.1", attempts: 9 }]);
  });

  it("never answers more than the window left, when another call restarted the window while this one waited", async () => {
    const key = "account:t_1:late@example.com";
    await store.countAttempt([key], 300);
    // Another call holds the key's row: this one starts (its now()) and waits for it.
    const holder = await db.transaction();
    await holder.raw("select 1 from console_login_throttle where key = ? for update", [key]);
    const waiting = store.countAttempt([key], 300);
    await sleep(60);
    // The other call starts a new window, later than this one's start, and commits.
    await holder.raw(
      "update console_login_throttle set window_started_at = clock_timestamp(), attempts = 1 where key = ?",
      [key],
    );
    await holder.commit();
    const [counted] = await waiting;
    expect(counted!.attempts).toBe(2);
    expect(counted!.windowLeftMs).toBeLessThanOrEqual(300);
    expect(counted!.windowLeftMs).toBeGreaterThan(0);
  });

  it("ends a session past a limit with its reason, for good", async () => {
    const { userId } = await user("sessions@example.com");
    const idle = digestConsoleToken(issueConsoleToken());
    const old = digestConsoleToken(issueConsoleToken());
    await store.startSession(userId, idle);
    await store.startSession(userId, old);
    await db("console_sessions")
      .update({ last_seen_at: db.raw("now() - interval '2 minutes'") })
      .where({ id_digest: idle });
    await db("console_sessions")
      .update({ created_at: db.raw("now() - interval '2 hours'") })
      .where({ id_digest: old });
    expect(await store.touchSession(idle, limits)).toBeUndefined();
    expect(await store.touchSession(old, limits)).toBeUndefined();
    const reasons = await db("console_sessions").select("id_digest", "ended_reason").whereIn("id_digest", [idle, old]);
    expect(
      Object.fromEntries(
        reasons.map((r: { id_digest: Buffer; ended_reason: string }) => [
          r.id_digest.equals(idle) ? "idle" : "old",
          r.ended_reason,
        ]),
      ),
    ).toEqual({
      idle: "idle",
      old: "absolute",
    });
    // Raising the limits does not bring them back.
    expect(await store.touchSession(idle, { idleMs: 86_400_000, absoluteMs: 86_400_000 })).toBeUndefined();
  });

  it("keeps a flash message for exactly one read", async () => {
    const { userId } = await user("flash@example.com");
    const session = digestConsoleToken(issueConsoleToken());
    await store.startSession(userId, session);
    expect(await store.takeFlash(session)).toBeUndefined();
    await store.setFlash(session, { kind: "success", text: "Saved." });
    expect(await store.takeFlash(session)).toEqual({ kind: "success", text: "Saved." });
    expect(await store.takeFlash(session)).toBeUndefined();
  });

  it("consumes a console link once, even when two browsers open it at the same moment", async () => {
    const { userId } = await user("link@example.com");
    const links = createConsoleLinks(db, store, { ttlMs: 60_000, idempotency: { ttlMs: 60_000, leaseMs: 5_000 } });
    const minted = await links.mint({
      tenantId: "t_1",
      userId,
      redirectPath: "/console",
      apiKeyId: "key_1",
      apiKey: "sk_live_whatever",
      idempotencyKey: "once-only-1",
    });
    const outcomes = await Promise.all(
      Array.from({ length: 5 }, () => store.consumeLink(digestConsoleToken(minted.token))),
    );
    expect(outcomes.filter((o) => o.outcome === "consumed")).toHaveLength(1);
    expect(outcomes.filter((o) => o.outcome === "used")).toHaveLength(4);
    expect((await store.consumeLink(digestConsoleToken(issueConsoleToken()))).outcome).toBe("unknown");
    // Stored: the digest, never the token.
    const row = await db("console_links").first<{ digest: Buffer }>("digest").where({ id: minted.id });
    expect(row.digest.equals(digestConsoleToken(minted.token))).toBe(true);
    const recorded = await db("idempotency_keys").first<{ result: unknown }>("result").where({ key: "once-only-1" });
    expect(JSON.stringify(recorded)).not.toContain(minted.token);
  });

  it("purges ended sessions, expired links and finished throttle windows after the keeping time", async () => {
    const { userId } = await user("purge@example.com");
    const ended = digestConsoleToken(issueConsoleToken());
    const live = digestConsoleToken(issueConsoleToken());
    await store.startSession(userId, ended);
    await store.startSession(userId, live);
    await store.endSession(ended, "logout");
    await db("console_sessions")
      .update({ ended_at: db.raw("now() - interval '8 days'") })
      .where({ id_digest: ended });
    await store.countAttempt(["address:10.9.9.9"], 60_000);
    await db("console_login_throttle")
      .update({ window_started_at: db.raw("now() - interval '1 hour'") })
      .where({ key: "address:10.9.9.9" });
    const purged = await store.purgeExpired({ absoluteMs: 3_600_000, windowMs: 900_000, keepMs: 7 * 86_400_000 });
    expect(purged).toBeGreaterThanOrEqual(2);
    expect(await db("console_sessions").first("user_id").where({ id_digest: ended })).toBeUndefined();
    expect(await store.touchSession(live, limits)).toMatchObject({ viewer: { email: "purge@example.com" } });
    expect(await db("console_login_throttle").first("key").where({ key: "address:10.9.9.9" })).toBeUndefined();
  });
});

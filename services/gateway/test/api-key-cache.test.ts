import { createScratchDatabase, type ScratchDatabase } from "@platform/local-stack/postgres-databases";
import { ListenedCache } from "@platform/service-kit/listened-cache";
import { createLogger } from "@platform/service-kit/logger";
import { createDatabase, migrateToLatest, type Knex } from "@platform/service-kit/postgres";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { migrations } from "../migrations/index.js";
import { GATEWAY_SCHEMA } from "../src/config.js";
import { API_KEY_CHANNEL, CachedApiKeyStore, createApiKeyStore, type ApiKeyStore } from "../src/db/api-key-store.js";
import { issueApiKey } from "../src/domain/api-key.js";

describe("the API key cache (real Postgres, LISTEN/NOTIFY)", () => {
  let scratch: ScratchDatabase;
  let db: Knex;
  let store: ApiKeyStore;
  let reads = 0;
  let cache: CachedApiKeyStore;

  beforeAll(async () => {
    scratch = await createScratchDatabase("keys");
    db = createDatabase({ url: scratch.url, schema: GATEWAY_SCHEMA });
    await migrateToLatest(db, GATEWAY_SCHEMA, migrations);
    store = createApiKeyStore(db);
    const counting: ApiKeyStore = { ...store, find: (id) => (reads++, store.find(id)) };
    cache = new CachedApiKeyStore(counting, {
      databaseUrl: scratch.url,
      ttlMs: 60_000,
      logger: createLogger("test", "silent"),
    });
    await cache.start();
  });
  afterAll(async () => {
    await cache?.close();
    await db?.destroy();
    await scratch?.drop();
  });

  const newKey = async () => {
    const issued = issueApiKey();
    await store.insert(issued, { name: "t", scopes: ["tenant:read"], tenantIds: ["t1"] });
    return issued;
  };

  it("stores a digest, never the key", async () => {
    const issued = await newKey();
    const row = (await db("api_keys").where({ id: issued.id }).first()) as Record<string, unknown>;
    expect(JSON.stringify(row)).not.toContain(issued.key.slice(-43));
    expect(row.digest).toEqual(issued.digest);
  });

  it("reads a key once and then serves it from memory", async () => {
    const issued = await newKey();
    const before = reads;
    expect((await cache.find(issued.id))?.scopes).toEqual(["tenant:read"]);
    expect((await cache.find(issued.id))?.tenantIds).toEqual(["t1"]);
    expect(reads - before).toBe(1);
  });

  it("evicts a key the moment it is revoked", async () => {
    const issued = await newKey();
    expect((await cache.find(issued.id))?.revoked).toBe(false);
    expect(await store.revoke(issued.id)).toBe(true);
    await expect.poll(async () => (await cache.find(issued.id))?.revoked, { timeout: 2_000 }).toBe(true);
  });

  it("does not cache unknown ids", async () => {
    const before = reads;
    await cache.find("key_000000000000000000000000");
    await cache.find("key_000000000000000000000000");
    expect(reads - before).toBe(2);
  });

  it("makes one read for a burst of misses of one key, not one per request", async () => {
    const issued = await newKey();
    const before = reads;
    const found = await Promise.all(Array.from({ length: 20 }, () => cache.find(issued.id)));
    expect(found.every((key) => key?.id === issued.id)).toBe(true);
    expect(reads - before).toBe(1);
  });

  it("does not join a read that began before a change was announced: the newcomer reads again", async () => {
    const listened = new ListenedCache<string>({
      databaseUrl: scratch.url,
      channel: API_KEY_CHANNEL,
      ttlMs: 60_000,
      logger: createLogger("test", "silent"),
      applicationName: "single-flight-test",
      what: "test value",
    });
    await listened.start();
    try {
      let release!: (value: string) => void;
      const first = listened.get("k", () => new Promise<string>((resolve) => (release = resolve)));
      let loads = 0;
      const loadAgain = () => (loads++, Promise.resolve("after"));
      // Before any announcement the newcomer shares the read in flight.
      const joined = listened.get("k", loadAgain);
      expect(loads).toBe(0);
      await db.raw("select pg_notify(?, 'k')", [API_KEY_CHANNEL]);
      // Once the announcement arrives, a newcomer reads again rather than take the older read's value.
      await expect
        .poll(
          async () => (await Promise.race([listened.get("k", loadAgain), Promise.resolve("pending")])) === "after",
          { timeout: 2_000 },
        )
        .toBe(true);
      expect(loads).toBeGreaterThanOrEqual(1);
      release("before");
      expect(await first).toBe("before");
      expect(await joined).toBe("before");
      // The read that raced with the change is not cached.
      expect(await listened.get("k", loadAgain)).toBe("after");
    } finally {
      await listened.close();
    }
  });

  it("bypasses the cache while its listener is down, and resumes caching once reconnected", async () => {
    const issued = await newKey();
    await cache.find(issued.id);
    await db.raw(
      "select pg_terminate_backend(pid) from pg_stat_activity where application_name = 'gateway-key-listener' and datname = ?",
      [scratch.name],
    );
    // A revocation made while nobody listens must still be seen.
    await db("api_keys").update({ revoked_at: db.fn.now() }).where({ id: issued.id });
    await expect.poll(async () => (await cache.find(issued.id))?.revoked, { timeout: 2_000 }).toBe(true);
    // After reconnecting (1 s back-off) the cache serves from memory again.
    const other = await newKey();
    await expect
      .poll(
        async () => {
          const before = reads;
          await cache.find(other.id);
          return reads - before;
        },
        { timeout: 5_000, interval: 200 },
      )
      .toBe(0);
  });
});

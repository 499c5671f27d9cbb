import { createScratchDatabase, type ScratchDatabase } from "@platform/local-stack/postgres-databases";
import { createLogger } from "@platform/service-kit/logger";
import { createDatabase, migrateToLatest, type Knex } from "@platform/service-kit/postgres";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { migrations } from "../migrations/index.js";
import { GATEWAY_SCHEMA } from "../src/config.js";
import { CachedApiKeyStore, createApiKeyStore, type ApiKeyStore } from "../src/db/api-key-store.js";
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

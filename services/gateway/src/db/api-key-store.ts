import type { Logger } from "pino";
import { ListenedCache } from "@platform/service-kit/listened-cache";
import type { Knex } from "@platform/service-kit/postgres";
import type { ApiKeyRecord, IssuedApiKey, Scope } from "../domain/api-key.js";

/** Channel on which every change to api_keys is announced (payload: the key id). */
export const API_KEY_CHANNEL = "gateway_api_keys";

interface ApiKeyRow {
  id: string;
  name: string;
  digest: Buffer;
  scopes: string[];
  tenant_ids: string[];
  revoked_at: Date | null;
}

function toRecord(row: ApiKeyRow): ApiKeyRecord {
  return {
    id: row.id,
    name: row.name,
    digest: row.digest,
    scopes: row.scopes as Scope[],
    tenantIds: row.tenant_ids,
    revoked: row.revoked_at !== null,
  };
}

export interface ApiKeyStore {
  find(id: string): Promise<ApiKeyRecord | undefined>;
  insert(key: IssuedApiKey, details: { name: string; scopes: Scope[]; tenantIds: string[] }): Promise<void>;
  /** Revokes the key and announces it in the same transaction; false when no such key. */
  revoke(id: string): Promise<boolean>;
}

export function createApiKeyStore(db: Knex): ApiKeyStore {
  return {
    async find(id) {
      const row = await db("api_keys")
        .first<ApiKeyRow | undefined>("id", "name", "digest", "scopes", "tenant_ids", "revoked_at")
        .where({ id });
      return row ? toRecord(row) : undefined;
    },
    async insert(key, details) {
      await db("api_keys").insert({
        id: key.id,
        name: details.name,
        digest: key.digest,
        scopes: details.scopes,
        tenant_ids: details.tenantIds,
      });
    },
    async revoke(id) {
      return db.transaction(async (trx) => {
        const updated = await trx("api_keys")
          .update({ revoked_at: trx.fn.now() })
          .where({ id })
          .whereNull("revoked_at");
        const exists = updated > 0 || (await trx("api_keys").first("id").where({ id })) !== undefined;
        // NOTIFY is delivered at commit, so every gateway evicts the key the moment it is revoked.
        await trx.raw("select pg_notify(?, ?)", [API_KEY_CHANNEL, id]);
        return exists;
      });
    },
  };
}

/**
 * A read-through cache of key records in front of the store (service-kit ListenedCache): entries
 * live `ttlMs` at most and are evicted as soon as Postgres announces a change on API_KEY_CHANNEL.
 * While the LISTEN connection is down (a Postgres restart), the cache is emptied and bypassed until
 * it is back, so a revocation is never missed.
 */
export class CachedApiKeyStore {
  private readonly cache: ListenedCache<ApiKeyRecord | undefined>;

  constructor(
    private readonly store: ApiKeyStore,
    options: { databaseUrl: string; ttlMs: number; logger: Logger },
  ) {
    this.cache = new ListenedCache({
      ...options,
      channel: API_KEY_CHANNEL,
      applicationName: "gateway-key-listener",
      what: "api key",
    });
  }

  find(id: string): Promise<ApiKeyRecord | undefined> {
    // Unknown ids are not cached: they cost one indexed read, and caching them would let random
    // ids fill memory.
    return this.cache.get(
      id,
      () => this.store.find(id),
      (record) => record !== undefined,
    );
  }

  /** Connects the LISTEN client; resolves once listening (or after the first failure, retrying). */
  start(): Promise<void> {
    return this.cache.start();
  }

  close(): Promise<void> {
    return this.cache.close();
  }
}

import pg from "pg";
import type { Logger } from "pino";
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
 * A read-through cache of key records in front of the store. Entries live `ttlMs` at most and are
 * evicted as soon as Postgres announces a change on API_KEY_CHANNEL. While the LISTEN connection
 * is down (a Postgres restart), the cache is emptied and bypassed until it is back, so a revocation
 * is never missed.
 */
export class CachedApiKeyStore {
  private readonly entries = new Map<string, { record: ApiKeyRecord | undefined; expiresAt: number }>();
  private listener: pg.Client | undefined;
  private listening = false;
  /** Bumped on every eviction, so a read that raced with a revocation is not cached. */
  private generation = 0;
  private closed = false;
  private reconnectTimer: NodeJS.Timeout | undefined;

  constructor(
    private readonly store: ApiKeyStore,
    private readonly options: { databaseUrl: string; ttlMs: number; logger: Logger },
  ) {}

  async find(id: string): Promise<ApiKeyRecord | undefined> {
    if (this.listening) {
      const cached = this.entries.get(id);
      if (cached && cached.expiresAt > Date.now()) return cached.record;
    }
    const generation = this.generation;
    const record = await this.store.find(id);
    // Unknown ids are not cached: they cost one indexed read, and caching them would let random
    // ids fill memory.
    if (this.listening && record && generation === this.generation) {
      this.entries.set(id, { record, expiresAt: Date.now() + this.options.ttlMs });
    }
    return record;
  }

  /** Connects the LISTEN client; resolves once listening (or after the first failure, retrying). */
  async start(): Promise<void> {
    await this.connect();
  }

  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.reconnectTimer);
    this.listening = false;
    await this.listener?.end().catch(() => undefined);
  }

  private evictAll(): void {
    this.generation++;
    this.entries.clear();
  }

  private async connect(): Promise<void> {
    const client = new pg.Client({
      connectionString: this.options.databaseUrl,
      application_name: "gateway-key-listener",
    });
    const lost = (error?: Error) => {
      if (this.listener !== client) return;
      this.listener = undefined;
      this.listening = false;
      this.evictAll();
      if (this.closed) return;
      this.options.logger.warn({ err: error }, "api key change listener lost; cache bypassed until it reconnects");
      this.reconnectTimer = setTimeout(() => void this.connect(), 1_000);
    };
    this.listener = client;
    client.on("error", lost);
    client.on("end", () => lost());
    client.on("notification", (message) => {
      if (message.channel !== API_KEY_CHANNEL) return;
      this.generation++;
      if (message.payload) this.entries.delete(message.payload);
    });
    try {
      await client.connect();
      await client.query(`listen ${API_KEY_CHANNEL}`);
      this.evictAll();
      this.listening = true;
    } catch (error) {
      client.removeAllListeners("end");
      await client.end().catch(() => undefined);
      lost(error as Error);
    }
  }
}

import pg from "pg";
import type { Logger } from "pino";

export interface ListenedCacheOptions {
  databaseUrl: string;
  /** The LISTEN channel whose notifications evict: the payload names the key, an empty payload evicts all. */
  channel: string;
  /** How long an entry lives at most, notification or not. */
  ttlMs: number;
  /** Entries kept at most (the oldest go first); default 10,000. */
  maxEntries?: number;
  logger: Logger;
  /** application_name of the LISTEN connection in pg_stat_activity. */
  applicationName: string;
  /** What is cached, for the log line when the LISTEN connection is lost ("api key"). */
  what: string;
}

/**
 * A read-through cache of rows in front of Postgres that never serves a changed row: the writers
 * (a trigger, or the mutation itself) `pg_notify(channel, key)` in the changing transaction, and
 * NOTIFY is delivered at commit, so every process evicts the key the moment the change commits.
 * Entries live `ttlMs` at most. While the LISTEN connection is down (a Postgres restart), the cache
 * is emptied and bypassed until it is back, so no change is missed; a read that raced with a
 * notification is not cached. Concurrent misses of one key share one read (a burst after a quiet
 * spell, when entries have expired, makes one read per key, not one per request), unless a change
 * was announced after that read began: then the newcomer reads again.
 */
export class ListenedCache<V> {
  private readonly entries = new Map<string, { value: V; expiresAt: number }>();
  /** The read in flight per key, with the generation it began in. */
  private readonly loading = new Map<string, { generation: number; value: Promise<V> }>();
  private listener: pg.Client | undefined;
  private listening = false;
  /** Bumped on every eviction, so a read that raced with a change is not cached. */
  private generation = 0;
  private closed = false;
  private reconnectTimer: NodeJS.Timeout | undefined;

  constructor(private readonly options: ListenedCacheOptions) {}

  /**
   * The cached value of `key`, else what `load` reads (cached when `cacheable` says so, and no
   * change was announced meanwhile).
   */
  async get(key: string, load: () => Promise<V>, cacheable: (value: V) => boolean = () => true): Promise<V> {
    if (this.listening) {
      const cached = this.entries.get(key);
      if (cached && cached.expiresAt > Date.now()) return cached.value;
      const inFlight = this.loading.get(key);
      if (inFlight && inFlight.generation === this.generation) return inFlight.value;
    }
    const generation = this.generation;
    const pending = load();
    if (this.listening) this.loading.set(key, { generation, value: pending });
    try {
      const value = await pending;
      if (this.listening && generation === this.generation && cacheable(value)) {
        this.entries.delete(key);
        if (this.entries.size >= (this.options.maxEntries ?? 10_000)) {
          this.entries.delete(this.entries.keys().next().value!);
        }
        this.entries.set(key, { value, expiresAt: Date.now() + this.options.ttlMs });
      }
      return value;
    } finally {
      if (this.loading.get(key)?.value === pending) this.loading.delete(key);
    }
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
      application_name: this.options.applicationName,
    });
    const lost = (error?: Error) => {
      if (this.listener !== client) return;
      this.listener = undefined;
      this.listening = false;
      this.evictAll();
      if (this.closed) return;
      this.options.logger.warn(
        { err: error },
        `${this.options.what} change listener lost; cache bypassed until it reconnects`,
      );
      this.reconnectTimer = setTimeout(() => void this.connect(), 1_000);
    };
    this.listener = client;
    client.on("error", lost);
    client.on("end", () => lost());
    client.on("notification", (message) => {
      if (message.channel !== this.options.channel) return;
      this.generation++;
      if (message.payload) this.entries.delete(message.payload);
      else this.entries.clear();
    });
    try {
      await client.connect();
      await client.query(`listen ${this.options.channel}`);
      this.evictAll();
      this.listening = true;
    } catch (error) {
      client.removeAllListeners("end");
      await client.end().catch(() => undefined);
      lost(error as Error);
    }
  }
}

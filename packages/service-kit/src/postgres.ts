import { createHash } from "node:crypto";
import knexFactory, { type Knex } from "knex";
import type pg from "pg";
import type { Logger } from "pino";
import { UnavailableError } from "./errors.js";

export type { Knex } from "knex";

/** One migration: knex's up/down pair, named by its file so ordering is explicit. */
export interface Migration {
  name: string;
  up(db: Knex): Promise<void>;
  down(db: Knex): Promise<void>;
}

export interface DatabaseOptions {
  url: string;
  /** The service's own schema; its tables and its migrations table live there. */
  schema: string;
  /**
   * Where unqualified names resolve (default: the schema alone). A service whose tables moved to a
   * schema of their own puts it first (webhooks: `webhooks_history`, then `webhooks`); its
   * migrations still run with the schema alone (migrateToLatest).
   */
  searchPath?: readonly string[];
  poolMax?: number;
  /**
   * Connections kept open however long they sit idle (default 0: every idle connection closes
   * after 30 s). A service keeps a few, so the first requests after a quiet spell do not wait for
   * new connections and statements prepared again.
   */
  poolMin?: number;
  /** application_name in pg_stat_activity. */
  applicationName?: string;
  /** Where knex's own warnings go (as JSON log lines, not console output). */
  logger?: Logger;
}

/** A knex instance bound to one service's schema (search_path), with a bounded pool. */
export function createDatabase(options: DatabaseOptions): Knex {
  return knexFactory({
    client: "pg",
    connection: {
      connectionString: options.url,
      application_name: options.applicationName ?? options.schema,
    },
    searchPath: [...(options.searchPath ?? [options.schema])],
    pool: { min: Math.min(options.poolMin ?? 0, options.poolMax ?? 10), max: options.poolMax ?? 10 },
    acquireConnectionTimeout: 5_000,
    log: {
      warn: (message: unknown) => options.logger?.warn({ knex: String(message) }, "knex warning"),
      error: (message: unknown) => options.logger?.error({ knex: String(message) }, "knex error"),
      deprecate: (method: string, alternative: string) =>
        options.logger?.warn({ method, alternative }, "knex deprecation"),
      debug: () => undefined,
    },
  });
}

/**
 * A named statement: pg parses and plans it once per connection, then only binds and executes it.
 * Written with `?` placeholders, which become $1..$n (so no `?` operator inside the text).
 */
export interface PreparedStatement {
  readonly name: string;
  readonly text: string;
}

export function preparedStatement(name: string, text: string): PreparedStatement {
  let n = 0;
  return { name, text: text.replace(/\?/g, () => `$${++n}`) };
}

/**
 * Where hot-path statements run: the service's knex pool (its connections, size and search_path)
 * or a pg.Pool of its own.
 */
export type StatementPool = Knex | pg.Pool;

/** One statement on a connection of `pool` (the caller's transaction, when it runs in one). */
export type RunStatement = <Row extends object = Record<string, unknown>>(
  statement: PreparedStatement | string,
  values?: unknown[],
) => Promise<Row[]>;

interface Lent {
  client: pg.ClientBase;
  /** knex's "query" event (what a knex query emits), so a listener still sees every statement. */
  announce?: (sql: string, bindings: unknown[]) => void;
  /** Gives the connection back; `broken` discards it. */
  release(broken: boolean): Promise<void>;
}

/** The part of knex's (untyped) pg client that lends and takes back pooled connections. */
interface KnexPoolAccess {
  emit(event: "query", query: { sql: string; bindings: unknown[] }): boolean;
  acquireConnection(): Promise<pg.ClientBase>;
  releaseConnection(connection: pg.ClientBase): Promise<void>;
}

async function lend(pool: StatementPool): Promise<Lent> {
  if (typeof pool === "function") {
    // knex: its pool validation drops a connection marked disposed, as it does after an error.
    const access = pool.client as KnexPoolAccess;
    const client = await access.acquireConnection();
    return {
      client,
      announce: (sql, bindings) => access.emit("query", { sql, bindings }),
      async release(broken) {
        if (broken) (client as unknown as { __knex__disposed?: string }).__knex__disposed = "rollback failed";
        await access.releaseConnection(client);
      },
    };
  }
  let client: pg.PoolClient;
  try {
    client = await pool.connect();
  } catch (error) {
    throw new UnavailableError("the database is not reachable", error);
  }
  return {
    client,
    release(broken) {
      client.release(broken);
      return Promise.resolve();
    },
  };
}

function runOn({ client, announce }: Lent): RunStatement {
  return async <Row extends object>(statement: PreparedStatement | string, values: unknown[] = []) => {
    const text = typeof statement === "string" ? statement : statement.text;
    announce?.(text, values);
    const query = typeof statement === "string" ? { text, values } : { name: statement.name, text, values };
    return (await client.query<Row>(query)).rows;
  };
}

/**
 * Runs one statement (`$1`… placeholders, or a PreparedStatement) on a connection of the pool and
 * returns its rows, without knex's query compiler and runner: for hot paths, where that layer
 * costs more CPU than pg itself. On the knex pool: same pool and size, same search_path (set when
 * knex opens a connection), same errors (pg's; KnexTimeoutError when no connection frees up in
 * time); a connection that failed is dropped by the pool's validation as with any knex query. On a
 * knex transaction, on its connection, inside it. On a pg.Pool, a connection that cannot be had is
 * an UnavailableError.
 */
export async function queryRows<Row extends object>(
  pool: StatementPool,
  statement: PreparedStatement | string,
  values: unknown[],
): Promise<Row[]> {
  const lent = await lend(pool);
  try {
    return await runOn(lent)<Row>(statement, values);
  } finally {
    await lent.release(false);
  }
}

/**
 * A statement knex built (its query builder or a raw), run by `queryRows` as a named prepared
 * statement whose name is a digest of its text: Postgres plans each distinct text once per
 * connection (a generic plan after its first few runs) instead of on every call. For reads over
 * partitioned tables, where planning every partition costs more than running the statement on the
 * few it touches. A filter knex leaves out (an optional one) is a different text, so a different
 * statement; the set of texts a store builds is small and fixed. Write a LIMIT into the text
 * (`.limit(n, { skipBinding: true })`): as a parameter, the generic plan guesses a tenth of the
 * rows, looks dearer than planning each call, and Postgres goes on planning each call.
 */
export function queryPrepared<Row extends object>(
  pool: StatementPool,
  query: { toSQL(): { toNative(): { sql: string; bindings: readonly unknown[] } } },
): Promise<Row[]> {
  const { sql, bindings } = query.toSQL().toNative();
  const name = `k_${createHash("sha256").update(sql).digest("base64url").slice(0, 24)}`;
  return queryRows<Row>(pool, { name, text: sql }, [...bindings]);
}

/**
 * BEGIN and `work`. On a connection in pg's pipeline mode (a pg.Pool made with `pipeline: true`),
 * BEGIN goes out in the same write as the statement `work` starts with, so the transaction costs one
 * round trip (and one write) less; otherwise BEGIN is answered first. Either way COMMIT is sent only
 * after every answer of `work` came back.
 */
function begin<T>({ client }: Lent, run: RunStatement, work: (run: RunStatement) => Promise<T>): Promise<T> {
  const pipelined = client as pg.ClientBase & Partial<Pick<pg.Client, "pipeline" | "connection">>;
  if (!pipelined.pipeline || !pipelined.connection) return run("begin").then(() => work(run));
  const stream = pipelined.connection.stream;
  stream.cork();
  let begun: Promise<unknown>;
  let working: Promise<T>;
  try {
    begun = run("begin");
    working = work(run); // runs up to its first await: its first statement is queued behind BEGIN
  } finally {
    stream.uncork(); // one write for both
  }
  return Promise.all([begun, working]).then(([, result]) => result);
}

/**
 * BEGIN, `work` (its statements on one connection), COMMIT; ROLLBACK on any error, and a connection
 * whose rollback failed is discarded rather than given back.
 */
export async function inTransaction<T>(pool: StatementPool, work: (run: RunStatement) => Promise<T>): Promise<T> {
  const lent = await lend(pool);
  const run = runOn(lent);
  let broken = false;
  try {
    const result = await begin(lent, run, work);
    await run("commit");
    return result;
  } catch (error) {
    await run("rollback").catch(() => {
      broken = true;
    });
    throw error;
  } finally {
    await lent.release(broken);
  }
}

/**
 * Brings the service's schema to the latest migration. The migration list is passed in (no
 * directory scanning), so the compiled service and its image carry exactly what they run.
 * Safe to run from several replicas at once: knex takes a lock row in the schema.
 */
export async function migrateToLatest(db: Knex, schema: string, migrations: Migration[]): Promise<string[]> {
  // Migrations name their tables unqualified, meaning the service's schema: on a pool whose
  // search_path puts another schema first they run on a connection of their own that has only it.
  const config = (db.client as { config: Knex.Config }).config;
  const searchPath = config.searchPath;
  const ownPath = searchPath === undefined || (Array.isArray(searchPath) ? searchPath : [searchPath]).join() === schema;
  if (!ownPath) {
    const own = knexFactory({ ...config, searchPath: [schema], pool: { min: 0, max: 1 } });
    try {
      return await migrateToLatest(own, schema, migrations);
    } finally {
      await own.destroy();
    }
  }
  await db.raw("create schema if not exists ??", [schema]).catch((error: unknown) => {
    // Two processes racing on "create schema if not exists" may hit a unique violation.
    if ((error as { code?: string }).code !== "23505") throw error;
  });
  const [, applied] = (await db.migrate.latest({
    schemaName: schema,
    tableName: "knex_migrations",
    migrationSource: {
      getMigrations: () => Promise.resolve(migrations),
      getMigrationName: (migration: Migration) => migration.name,
      getMigration: (migration: Migration) => Promise.resolve(migration),
    },
  })) as [number, string[]];
  return applied;
}

/** Waits until Postgres answers (a fresh cluster or a restarting one), up to `timeoutMs`. */
export async function waitForDatabase(db: Knex, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (let attempt = 0; ; attempt++) {
    try {
      await db.raw("select 1");
      return;
    } catch (error) {
      if (Date.now() > deadline || !isTransientDatabaseError(error)) throw error;
      await new Promise((resolve) => setTimeout(resolve, Math.min(2_000, 100 * 2 ** attempt)));
    }
  }
}

const transientNodeCodes = new Set(["ECONNREFUSED", "ECONNRESET", "ETIMEDOUT", "EPIPE", "ENOTFOUND", "EAI_AGAIN"]);

/**
 * True for failures that mean "try again" rather than "this query is wrong": connection refused or
 * reset, Postgres shutting down or starting up (SQLSTATE class 08 and 57P0x), pool acquisition
 * timeouts, a connection refused for want of slots (53300: max_connections or a role's limit
 * reached), and a transaction Postgres rolled back to resolve a conflict (class 40: a deadlock or a
 * serialization failure; nothing of it was applied). Callers answer these with UNAVAILABLE, never
 * INTERNAL.
 */
export function isTransientDatabaseError(error: unknown): boolean {
  if (typeof error !== "object" || error === null) return false;
  const { code, name, message } = error as { code?: unknown; name?: unknown; message?: unknown };
  if (name === "KnexTimeoutError") return true;
  if (typeof code === "string") {
    if (transientNodeCodes.has(code)) return true;
    if (code.startsWith("08") || code.startsWith("57P") || /^40[0-9A-Z]{3}$/.test(code)) return true;
    if (code === "53300") return true;
  }
  return (
    typeof message === "string" &&
    /Connection terminated|connection ended|Client has encountered a connection error/i.test(message)
  );
}

/**
 * A service's start-up database step: a pool on its schema (two of its connections kept open while
 * idle), wait for Postgres, and (local runs) migrate. In Kubernetes `migrateOnStart` is false and
 * the migrate hook Job has already run.
 */
export async function openServiceDatabase(options: {
  url: string;
  schema: string;
  searchPath?: readonly string[];
  poolMax: number;
  migrateOnStart: boolean;
  migrations: Migration[];
  logger: Logger;
}): Promise<Knex> {
  const db = createDatabase({
    url: options.url,
    schema: options.schema,
    ...(options.searchPath ? { searchPath: options.searchPath } : {}),
    poolMax: options.poolMax,
    poolMin: 2,
    logger: options.logger,
  });
  await waitForDatabase(db, 30_000);
  if (options.migrateOnStart) {
    const applied = await migrateToLatest(db, options.schema, options.migrations);
    if (applied.length > 0) options.logger.info({ applied }, "migrations applied");
  }
  return db;
}

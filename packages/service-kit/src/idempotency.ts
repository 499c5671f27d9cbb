import { createHash, randomUUID } from "node:crypto";
import type { Knex } from "knex";
import type { Logger } from "pino";
import { DomainError } from "./errors.js";
import { purgeEvery } from "./purge.js";

/**
 * Idempotent mutations, recorded by the service that owns the effect.
 *
 * A command arrives with the partner's Idempotency-Key, a scope (the tenant) and a fingerprint
 * of the request. Two transactions:
 *   1. claim: insert (scope, key, fingerprint, state=in_progress, lease) and commit. A concurrent
 *      repeat now sees the claim and gets 409 idempotency.in_progress instead of waiting.
 *   2. effect: in ONE transaction, run the effect and store its result on the row
 *      (state=completed). A crash before this commit leaves no effect and a stale claim, which a
 *      retry takes over once the lease has expired; a crash after it leaves effect and result
 *      together, which a retry replays.
 * A repeat with the same key and another fingerprint gets 422 idempotency.key_reused. When the
 * effect fails with a DomainError (a business refusal such as "channel not ready") the claim is
 * released, so the same key may be retried once the condition changes. Rows expire after `ttlMs`
 * and are purged by purgeExpiredIdempotencyKeys.
 */
export const IDEMPOTENCY_TABLE = "idempotency_keys";

export class IdempotencyKeyReusedError extends DomainError {
  override name = "IdempotencyKeyReusedError";
  constructor() {
    super(
      "failed_precondition",
      "idempotency.key_reused",
      "this Idempotency-Key was already used with a different request; use a new key for a new request",
    );
  }
}

export class IdempotencyInProgressError extends DomainError {
  override name = "IdempotencyInProgressError";
  constructor() {
    super(
      "conflict",
      "idempotency.in_progress",
      "a request with this Idempotency-Key is still being processed; retry shortly",
    );
  }
}

export interface IdempotentCommand {
  /** Who the key belongs to (a tenant): the same key under two scopes is two commands. */
  scope: string;
  key: string;
  /** Digest of what the request asks for; see fingerprintOf. */
  fingerprint: string;
}

export interface IdempotencyOptions {
  /** How long a key is remembered (24 h by default). */
  ttlMs: number;
  /** How long a claim blocks repeats before a retry may take it over (a crashed first attempt). */
  leaseMs: number;
}

export const defaultIdempotencyOptions: IdempotencyOptions = { ttlMs: 24 * 3_600_000, leaseMs: 30_000 };

export interface IdempotentOutcome<R> {
  result: R;
  /** true when this is a repeat and `result` is the first execution's result. */
  replayed: boolean;
}

/** SHA-256 over the operation name and the request bytes (a deterministic serialization). */
export function fingerprintOf(operation: string, request: Uint8Array | string): string {
  return createHash("sha256").update(operation).update("\0").update(request).digest("hex");
}

interface IdempotencyRow {
  fingerprint: string;
  state: "in_progress" | "completed";
  result: unknown;
  lease_expired: boolean;
}

/** The migration body every owning service runs in its own schema. */
export async function createIdempotencyTable(db: Knex): Promise<void> {
  await db.schema.createTable(IDEMPOTENCY_TABLE, (table) => {
    table.text("scope").notNullable();
    table.text("key").notNullable();
    table.text("fingerprint").notNullable();
    table.text("state").notNullable();
    // The attempt holding the claim; only it may complete the row.
    table.uuid("owner").notNullable();
    table.jsonb("result").nullable();
    table.timestamp("created_at", { useTz: true }).notNullable().defaultTo(db.fn.now());
    table.timestamp("locked_until", { useTz: true }).notNullable();
    table.timestamp("expires_at", { useTz: true }).notNullable();
    table.primary(["scope", "key"]);
    table.index(["expires_at"], "idempotency_keys_expires_at_idx");
  });
}

/**
 * Runs `effect` at most once per (scope, key). `effect` gets the transaction it must use for
 * every write of the effect, so effect and recorded result commit together.
 */
export async function runIdempotently<R>(
  db: Knex,
  command: IdempotentCommand,
  effect: (trx: Knex.Transaction) => Promise<R>,
  options: IdempotencyOptions = defaultIdempotencyOptions,
): Promise<IdempotentOutcome<R>> {
  const owner = randomUUID();
  const claimed = await claim(db, command, owner, options);
  if (!claimed) {
    const row = await db(IDEMPOTENCY_TABLE)
      .first<IdempotencyRow | undefined>(
        "fingerprint",
        "state",
        "result",
        db.raw("locked_until < now() as lease_expired"),
      )
      .where({ scope: command.scope, key: command.key });
    if (!row) return runIdempotently(db, command, effect, options); // purged or released meanwhile
    if (row.fingerprint !== command.fingerprint) throw new IdempotencyKeyReusedError();
    if (row.state === "completed") return { result: row.result as R, replayed: true };
    if (!row.lease_expired || !(await takeOver(db, command, owner, options))) throw new IdempotencyInProgressError();
  }
  try {
    const result = await db.transaction(async (trx) => {
      const value = await effect(trx);
      const updated = await trx(IDEMPOTENCY_TABLE)
        .update({ state: "completed", result: JSON.stringify(value ?? null) })
        .where({ scope: command.scope, key: command.key, state: "in_progress", owner });
      if (updated !== 1) throw new IdempotencyInProgressError(); // our claim was taken over: roll back
      return value;
    });
    return { result, replayed: false };
  } catch (error) {
    if (error instanceof DomainError && !(error instanceof IdempotencyInProgressError)) {
      await db(IDEMPOTENCY_TABLE)
        .delete()
        .where({ scope: command.scope, key: command.key, state: "in_progress", owner })
        .catch(() => undefined); // the lease frees it anyway
    }
    throw error;
  }
}

async function claim(
  db: Knex,
  command: IdempotentCommand,
  owner: string,
  options: IdempotencyOptions,
): Promise<boolean> {
  const inserted = await db.raw<{ rowCount: number }>(
    `insert into ${IDEMPOTENCY_TABLE} (scope, key, fingerprint, state, owner, locked_until, expires_at)
     values (?, ?, ?, 'in_progress', ?, now() + make_interval(secs => ?), now() + make_interval(secs => ?))
     on conflict (scope, key) do update
       set fingerprint = excluded.fingerprint, state = 'in_progress', owner = excluded.owner, result = null,
           created_at = now(), locked_until = excluded.locked_until, expires_at = excluded.expires_at
       where ${IDEMPOTENCY_TABLE}.expires_at < now()`,
    [command.scope, command.key, command.fingerprint, owner, options.leaseMs / 1000, options.ttlMs / 1000],
  );
  return inserted.rowCount === 1;
}

/** A claim whose lease ran out (its holder crashed) passes to this attempt, once. */
async function takeOver(
  db: Knex,
  command: IdempotentCommand,
  owner: string,
  options: IdempotencyOptions,
): Promise<boolean> {
  const updated = await db(IDEMPOTENCY_TABLE)
    .update({ owner, locked_until: db.raw("now() + make_interval(secs => ?)", [options.leaseMs / 1000]) })
    .where({ scope: command.scope, key: command.key, state: "in_progress", fingerprint: command.fingerprint })
    .andWhere("locked_until", "<", db.fn.now());
  return updated === 1;
}

/** Deletes expired keys in batches; returns how many were removed. */
export async function purgeExpiredIdempotencyKeys(db: Knex, batchSize = 1_000): Promise<number> {
  let total = 0;
  for (;;) {
    const result = await db.raw<{ rowCount: number }>(
      `delete from ${IDEMPOTENCY_TABLE} where ctid in (
         select ctid from ${IDEMPOTENCY_TABLE} where expires_at < now() limit ?)`,
      [batchSize],
    );
    total += result.rowCount;
    if (result.rowCount < batchSize) return total;
  }
}

/**
 * Purges expired keys every `intervalMs` in the background (logging what it removed, retrying
 * after a failure); `stop()` ends it at shutdown.
 */
export function purgeExpiredIdempotencyKeysEvery(
  db: Knex,
  intervalMs: number,
  logger: Pick<Logger, "info" | "warn">,
): { stop(): void } {
  return purgeEvery(intervalMs, logger, "expired idempotency keys", () => purgeExpiredIdempotencyKeys(db));
}

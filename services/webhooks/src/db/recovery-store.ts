/**
 * Recoveries in Postgres: the job row (progress, lease) and its items, the deliveries it covers,
 * fixed at creation. A runner claims a queued or running recovery whose lease has run out, and
 * handles its items one transaction each, renewing the lease in that transaction: another
 * replica takes over a recovery whose runner died, and an item is marked done in the same
 * transaction as its redrive, so it is redriven once.
 */
import type { Knex } from "@platform/service-kit/postgres";
import { RECOVERY_ID } from "../domain/ids.js";
import {
  recoverableStatuses,
  RecoveryInProgressError,
  RecoveryNotFoundError,
  type RecoveryState,
  type RecoveryWindow,
} from "../domain/recovery.js";

export interface RecoveryRecord {
  id: string;
  tenantId: string;
  endpointId: string;
  since: Date;
  until: Date | null;
  state: RecoveryState;
  total: number;
  redriven: number;
  skipped: number;
  failureCode: string | null;
  actor: string | null;
  createdAt: Date;
  startedAt: Date | null;
  finishedAt: Date | null;
  updatedAt: Date;
}

interface RecoveryRow {
  id: string;
  tenant_id: string;
  endpoint_id: string;
  since: Date;
  until: Date | null;
  state: RecoveryState;
  total: number;
  redriven: number;
  skipped: number;
  failure_code: string | null;
  actor: string | null;
  created_at: Date;
  started_at: Date | null;
  finished_at: Date | null;
  updated_at: Date;
}

const columns = [
  "id",
  "tenant_id",
  "endpoint_id",
  "since",
  "until",
  "state",
  "total",
  "redriven",
  "skipped",
  "failure_code",
  "actor",
  "created_at",
  "started_at",
  "finished_at",
  "updated_at",
];

function fromRow(row: RecoveryRow): RecoveryRecord {
  return {
    id: row.id,
    tenantId: row.tenant_id,
    endpointId: row.endpoint_id,
    since: row.since,
    until: row.until,
    state: row.state,
    total: row.total,
    redriven: row.redriven,
    skipped: row.skipped,
    failureCode: row.failure_code,
    actor: row.actor,
    createdAt: row.created_at,
    startedAt: row.started_at,
    finishedAt: row.finished_at,
    updatedAt: row.updated_at,
  };
}

/** The endpoint's recoverable deliveries in the window (what a recovery created now would cover). */
function recoverable(query: Knex | Knex.Transaction, endpointId: string, window: RecoveryWindow) {
  return query("deliveries")
    .where({ endpoint_id: endpointId })
    .whereIn("status", recoverableStatuses)
    .andWhere("created_at", ">=", window.since)
    .andWhere("created_at", "<", window.until);
}

export async function countRecoverable(
  db: Knex | Knex.Transaction,
  endpointId: string,
  window: RecoveryWindow,
): Promise<number> {
  const [row] = await recoverable(db, endpointId, window).count<{ count: string }[]>({ count: "*" });
  return Number(row?.count ?? 0);
}

/**
 * A new recovery with its items; the endpoint must be locked by `trx`. Completed at once when it
 * covers nothing. RecoveryInProgressError while another recovery of the endpoint is active.
 */
export async function insertRecovery(
  trx: Knex.Transaction,
  input: { id: string; tenantId: string; endpointId: string; window: RecoveryWindow; actor: string | null; now: Date },
): Promise<RecoveryRecord> {
  const active = await trx("recoveries")
    .where({ endpoint_id: input.endpointId })
    .whereIn("state", ["queued", "running"])
    .first<{ id: string } | undefined>("id");
  if (active) throw new RecoveryInProgressError(active.id);
  await trx("recoveries").insert({
    id: input.id,
    tenant_id: input.tenantId,
    endpoint_id: input.endpointId,
    since: input.window.since,
    until: input.window.untilGiven ? input.window.until : null,
    state: "queued",
    total: 0,
    actor: input.actor,
    created_at: input.now,
    updated_at: input.now,
  });
  const items = await trx.raw<{ rowCount: number }>(
    `insert into recovery_items (recovery_id, delivery_id, seq)
     select ?, id, seq from deliveries
      where endpoint_id = ? and status = any(?::text[])
        and created_at >= ? and created_at < ?`,
    [input.id, input.endpointId, [...recoverableStatuses], input.window.since, input.window.until],
  );
  const total = items.rowCount;
  const [row] = await trx("recoveries")
    .where({ id: input.id })
    .update(total === 0 ? { total, state: "completed", started_at: input.now, finished_at: input.now } : { total })
    .returning<RecoveryRow[]>(columns);
  return fromRow(row!);
}

export async function getRecovery(
  db: Knex,
  tenantId: string,
  endpointId: string,
  recoveryId: string,
): Promise<RecoveryRecord> {
  if (!RECOVERY_ID.test(recoveryId)) throw new RecoveryNotFoundError();
  const row = await db("recoveries")
    .where({ tenant_id: tenantId, endpoint_id: endpointId, id: recoveryId })
    .first<RecoveryRow | undefined>(columns);
  if (!row) throw new RecoveryNotFoundError();
  return fromRow(row);
}

/** The endpoint's latest `limit` recoveries, newest first. */
export async function listRecoveries(
  db: Knex,
  tenantId: string,
  endpointId: string,
  limit: number,
): Promise<RecoveryRecord[]> {
  const rows = await db("recoveries")
    .where({ tenant_id: tenantId, endpoint_id: endpointId })
    .orderBy("created_at", "desc")
    .orderBy("id", "desc")
    .limit(limit)
    .select<RecoveryRow[]>(columns);
  return rows.map(fromRow);
}

/**
 * Takes the oldest active recovery that nobody holds (never leased, or its lease ran out) for
 * `owner` until `leaseMs` from now; running from then on.
 */
export async function claimRecovery(db: Knex, owner: string, leaseMs: number): Promise<RecoveryRecord | undefined> {
  const claimed = await db.raw<{ rows: RecoveryRow[] }>(
    `update recoveries r
        set state = 'running', lease_owner = ?,
            leased_until = now() + make_interval(secs => ?::double precision / 1000),
            started_at = coalesce(r.started_at, now()), updated_at = now()
       from (select id from recoveries
              where state in ('queued', 'running') and (leased_until is null or leased_until < now())
              order by created_at
              limit 1
              for update skip locked) free
      where r.id = free.id
  returning ${columns.map((column) => `r.${column}`).join(", ")}`,
    [owner, leaseMs],
  );
  const row = claimed.rows[0];
  return row ? fromRow(row) : undefined;
}

/** The recovery, locked, if `owner` still holds it; undefined when its lease went to another runner. */
export async function lockHeldRecovery(
  trx: Knex.Transaction,
  recoveryId: string,
  owner: string,
): Promise<RecoveryRecord | undefined> {
  const row = await trx("recoveries")
    .where({ id: recoveryId, lease_owner: owner })
    .whereIn("state", ["queued", "running"])
    .forUpdate()
    .first<RecoveryRow | undefined>(columns);
  return row ? fromRow(row) : undefined;
}

/** The next item not done yet, in delivery order, locked; undefined when every item is done. */
export async function nextRecoveryItem(trx: Knex.Transaction, recoveryId: string): Promise<string | undefined> {
  const row = await trx("recovery_items")
    .where({ recovery_id: recoveryId })
    .whereNull("done_at")
    .orderBy("seq", "asc")
    .forUpdate()
    .first<{ delivery_id: string } | undefined>("delivery_id");
  return row?.delivery_id;
}

/** The item is done (redriven or skipped), the count goes up and the lease is renewed. */
export async function recordRecoveryItem(
  trx: Knex.Transaction,
  input: { recoveryId: string; deliveryId: string; outcome: "redriven" | "skipped"; leaseMs: number; now: Date },
): Promise<void> {
  await trx("recovery_items")
    .where({ recovery_id: input.recoveryId, delivery_id: input.deliveryId })
    .update({ done_at: input.now });
  await trx("recoveries")
    .where({ id: input.recoveryId })
    .update({
      [input.outcome]: trx.raw("?? + 1", [input.outcome]),
      leased_until: trx.raw("now() + make_interval(secs => ?::double precision / 1000)", [input.leaseMs]),
      updated_at: input.now,
    });
}

/** The recovery ends: completed, or failed with a code; its lease is released. */
export async function finishRecovery(
  trx: Knex.Transaction,
  recoveryId: string,
  outcome: { state: "completed" } | { state: "failed"; failureCode: string },
  now: Date,
): Promise<RecoveryRecord> {
  const [row] = await trx("recoveries")
    .where({ id: recoveryId })
    .update({
      state: outcome.state,
      failure_code: outcome.state === "failed" ? outcome.failureCode : null,
      finished_at: now,
      lease_owner: null,
      leased_until: null,
      updated_at: now,
    })
    .returning<RecoveryRow[]>(columns);
  return fromRow(row!);
}

/** Gives the lease back (a runner stopping): another runner may continue at once. */
export async function releaseRecovery(db: Knex, recoveryId: string, owner: string): Promise<void> {
  await db("recoveries").where({ id: recoveryId, lease_owner: owner }).update({ leased_until: null });
}

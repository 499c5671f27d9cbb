/**
 * The projection tables (migration 20261123030000_create_projections): applying one event of the
 * stream in the caller's transaction, and the cursor-paged reads. Every write is guarded by the
 * stream sequence, so applying events twice, or out of order, gives the same rows.
 */
import { consumeFromOutbox } from "@platform/service-kit/outbox";
import type { Knex } from "@platform/service-kit/postgres";
import { attentionItemId, projectEvent, type ProjectedEvent } from "../domain/projection.js";
import { TenantNotFoundError } from "../domain/tenant.js";

export const projectionTables = [
  "projection_events",
  "projection_work",
  "projection_attention",
  "projection_activity",
] as const;

/** The advisory lock between the live projector (shared) and a rebuild (exclusive). */
export const PROJECTION_LOCK_KEY = 0x70726f6a; // "proj"

/** Takes the live projector's side of the lock for the rest of the transaction. */
export async function lockShared(trx: Knex.Transaction): Promise<void> {
  await trx.raw("select pg_advisory_xact_lock_shared(?)", [PROJECTION_LOCK_KEY]);
}

/** Takes the rebuild's side of the lock for the rest of the transaction. */
export async function lockExclusive(trx: Knex.Transaction): Promise<void> {
  await trx.raw("select pg_advisory_xact_lock(?)", [PROJECTION_LOCK_KEY]);
}

/**
 * Records one event (once) and applies it to work, attention and activity; removes its kept
 * outbox row. Returns false when the event was already recorded (nothing changed).
 */
export async function applyEvent(trx: Knex.Transaction, event: ProjectedEvent, seq: number): Promise<boolean> {
  await consumeFromOutbox(trx, event.id);
  const recorded = await trx("projection_events")
    .insert({ event_id: event.id, seq, tenant_id: event.tenantId, type: event.type })
    .onConflict("event_id")
    .ignore()
    .returning("event_id");
  if (recorded.length === 0) return false;
  const projection = projectEvent(event);
  const a = projection.activity;
  await trx("projection_activity")
    .insert({
      tenant_id: event.tenantId,
      event_id: a.eventId,
      seq,
      type: a.type,
      occurred_at: a.occurredAt,
      subject_kind: a.subjectKind,
      subject_id: a.subjectId,
      reason_code: a.reasonCode,
      state: a.state,
      actor: a.actor,
    })
    .onConflict(["tenant_id", "event_id"])
    .ignore();
  if (projection.work) {
    const w = projection.work;
    await trx.raw(
      `insert into projection_work (tenant_id, notification_id, type, state, reason_code, created_at, updated_at, seq)
       values (?, ?, ?, ?, ?, ?, ?, ?)
       on conflict (tenant_id, notification_id) do update
         set type = excluded.type, state = excluded.state, reason_code = excluded.reason_code,
             updated_at = excluded.updated_at, seq = excluded.seq
         where projection_work.seq < excluded.seq`,
      [event.tenantId, w.notificationId, w.type, w.state, w.reasonCode, w.createdAt, event.occurredAt, seq],
    );
  }
  if (projection.attention) {
    const c = projection.attention;
    const id = attentionItemId(c.kind, c.subjectId);
    await trx.raw(
      `insert into projection_attention
         (tenant_id, id, kind, subject_id, reason_code, cause, opened_at, event_id, open, seq)
       values (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
       on conflict (tenant_id, id) do update
         set reason_code = excluded.reason_code, cause = excluded.cause, opened_at = excluded.opened_at,
             event_id = excluded.event_id, open = excluded.open, seq = excluded.seq
         where projection_attention.seq < excluded.seq`,
      [
        event.tenantId,
        id,
        c.kind,
        c.subjectId,
        c.open ? c.reasonCode : "",
        c.open ? c.cause : "",
        event.occurredAt,
        event.id,
        c.open,
        seq,
      ],
    );
  }
  return true;
}

/** Empties every projection (a rebuild, under the exclusive lock). */
export async function truncateProjections(trx: Knex.Transaction): Promise<void> {
  await trx.raw(`truncate ${projectionTables.join(", ")}`);
}

/** A row as pg returns it. */
type DbRow = { seq: string } & Record<string, unknown>;

export interface WorkRow {
  notificationId: string;
  type: string;
  state: string;
  reasonCode: string;
  createdAt: Date;
  updatedAt: Date;
}

export interface AttentionRow {
  id: string;
  kind: string;
  subjectId: string;
  reasonCode: string;
  cause: string;
  openedAt: Date;
  eventId: string;
}

export interface ActivityRow {
  eventId: string;
  type: string;
  occurredAt: Date;
  subjectKind: string;
  subjectId: string;
  reasonCode: string;
  state: string;
  actor: string;
}

export interface Page<T> {
  items: T[];
  /** The sequence of the last item when there are more. */
  nextSeq?: string;
}

export interface ProjectionReader {
  listWork(tenantId: string, limit: number, beforeSeq?: string): Promise<Page<WorkRow>>;
  listAttention(tenantId: string, limit: number, beforeSeq?: string): Promise<Page<AttentionRow>>;
  listActivity(tenantId: string, limit: number, beforeSeq?: string): Promise<Page<ActivityRow>>;
}

export function createProjectionReader(db: Knex): ProjectionReader {
  async function page<R extends { seq: string }, T>(
    tenantId: string,
    table: string,
    limit: number,
    beforeSeq: string | undefined,
    map: (row: R) => T,
    extra?: Record<string, unknown>,
  ): Promise<Page<T>> {
    const tenant = await db("tenants").first<{ id: string } | undefined>("id").where({ id: tenantId });
    if (!tenant) throw new TenantNotFoundError();
    let query = db(table)
      .where({ tenant_id: tenantId, ...extra })
      .orderBy("seq", "desc")
      .limit(limit + 1);
    if (beforeSeq !== undefined) query = query.andWhere("seq", "<", beforeSeq);
    const rows = (await query.select("*")) as R[];
    const more = rows.length > limit;
    const shown = rows.slice(0, limit);
    return { items: shown.map(map), nextSeq: more ? String(shown[shown.length - 1]!.seq) : undefined };
  }
  return {
    listWork: (tenantId, limit, beforeSeq) =>
      page(tenantId, "projection_work", limit, beforeSeq, (row: DbRow) => ({
        notificationId: row.notification_id as string,
        type: row.type as string,
        state: row.state as string,
        reasonCode: row.reason_code as string,
        createdAt: row.created_at as Date,
        updatedAt: row.updated_at as Date,
      })),
    listAttention: (tenantId, limit, beforeSeq) =>
      page(
        tenantId,
        "projection_attention",
        limit,
        beforeSeq,
        (row: DbRow) => ({
          id: row.id as string,
          kind: row.kind as string,
          subjectId: row.subject_id as string,
          reasonCode: row.reason_code as string,
          cause: row.cause as string,
          openedAt: row.opened_at as Date,
          eventId: row.event_id as string,
        }),
        { open: true },
      ),
    listActivity: (tenantId, limit, beforeSeq) =>
      page(tenantId, "projection_activity", limit, beforeSeq, (row: DbRow) => ({
        eventId: row.event_id as string,
        type: row.type as string,
        occurredAt: row.occurred_at as Date,
        subjectKind: row.subject_kind as string,
        subjectId: row.subject_id as string,
        reasonCode: row.reason_code as string,
        state: row.state as string,
        actor: row.actor as string,
      })),
  };
}

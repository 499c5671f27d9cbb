/**
 * The projection tables (migration 20261123030000_create_projections): applying one event of the
 * stream in the caller's transaction, and the cursor-paged reads. Every write is guarded by the
 * stream sequence, so applying events twice, or out of order, gives the same rows.
 */
import { outboxTable } from "@platform/service-kit/outbox";
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
 * One event in one statement (one round trip, not one per table): its kept outbox row deleted,
 * the event recorded once (dedupe by id), and only when it is new, its activity entry and its
 * work and attention changes (each guarded by the stream sequence).
 */
const applyEventSql = `
  with consumed as (
    delete from ${outboxTable} where event_id = ?
  ), recorded as (
    insert into projection_events (event_id, seq, tenant_id, type) values (?, ?, ?, ?)
    on conflict (event_id) do nothing
    returning event_id
  ), activity as (
    insert into projection_activity
      (tenant_id, event_id, seq, type, occurred_at, subject_kind, subject_id, reason_code, state, actor)
    select ?, ?, ?::bigint, ?, ?::timestamptz, ?, ?, ?, ?, ? from recorded
    on conflict (tenant_id, event_id) do nothing
  ), work as (
    insert into projection_work (tenant_id, notification_id, type, state, reason_code, created_at, updated_at, seq)
    select ?, ?, ?, ?, ?, ?::timestamptz, ?::timestamptz, ?::bigint from recorded where ?::boolean
    on conflict (tenant_id, notification_id) do update
      set type = excluded.type, state = excluded.state, reason_code = excluded.reason_code,
          updated_at = excluded.updated_at, seq = excluded.seq
      where projection_work.seq < excluded.seq
  ), attention as (
    insert into projection_attention
      (tenant_id, id, kind, subject_id, reason_code, cause, opened_at, event_id, open, seq)
    select ?, ?, ?, ?, ?, ?, ?::timestamptz, ?, ?::boolean, ?::bigint from recorded where ?::boolean
    on conflict (tenant_id, id) do update
      set reason_code = excluded.reason_code, cause = excluded.cause, opened_at = excluded.opened_at,
          event_id = excluded.event_id, open = excluded.open, seq = excluded.seq
      where projection_attention.seq < excluded.seq
  )
  select count(*)::int as recorded from recorded`;

/**
 * Records one event (once) and applies it to work, attention and activity; removes its kept
 * outbox row. Returns false when the event was already recorded (nothing changed).
 */
export async function applyEvent(trx: Knex.Transaction, event: ProjectedEvent, seq: number): Promise<boolean> {
  const projection = projectEvent(event);
  const a = projection.activity;
  const w = projection.work;
  const c = projection.attention;
  const { rows } = await trx.raw<{ rows: { recorded: number }[] }>(applyEventSql, [
    event.id,
    event.id,
    seq,
    event.tenantId,
    event.type,
    event.tenantId,
    a.eventId,
    seq,
    a.type,
    a.occurredAt,
    a.subjectKind,
    a.subjectId,
    a.reasonCode,
    a.state,
    a.actor,
    event.tenantId,
    w?.notificationId ?? null,
    w?.type ?? null,
    w?.state ?? null,
    w?.reasonCode ?? null,
    w?.createdAt ?? null,
    event.occurredAt,
    seq,
    w !== undefined,
    event.tenantId,
    c ? attentionItemId(c.kind, c.subjectId) : null,
    c?.kind ?? null,
    c?.subjectId ?? null,
    c ? (c.open ? c.reasonCode : "") : null,
    c ? (c.open ? c.cause : "") : null,
    event.occurredAt,
    event.id,
    c?.open ?? null,
    seq,
    c !== undefined,
  ]);
  return rows[0]!.recorded > 0;
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

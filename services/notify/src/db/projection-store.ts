/**
 * The projection tables (migration 20261123030000_create_projections): applying one event of the
 * stream in the caller's transaction, and the cursor-paged reads. Every write is guarded by the
 * stream sequence, so applying events twice, or out of order, gives the same rows.
 */
import { preparedStatement, queryRows, type Knex } from "@platform/service-kit/postgres";
import { attentionItemId, projectEvent, type ProjectedEvent } from "../domain/projection.js";
import { TenantNotFoundError } from "../domain/tenant.js";

export const projectionTables = [
  "projection_events",
  "projection_work",
  "projection_attention",
  "projection_activity",
] as const;

/**
 * The advisory lock between the live projector (shared, taken by apply_projected_events) and a
 * rebuild (exclusive).
 */
export const PROJECTION_LOCK_KEY = 0x70726f6a; // "proj"

/** Takes the rebuild's side of the lock for the rest of the transaction. */
export async function lockExclusive(trx: Knex.Transaction): Promise<void> {
  await trx.raw("select pg_advisory_xact_lock(?)", [PROJECTION_LOCK_KEY]);
}

/** A fetch's events applied in one statement (migration 20261124200000_apply_projected_events). */
const applyEventsSql = preparedStatement(
  "notify_apply_projected_events",
  "select apply_projected_events(?::jsonb) as event_id",
);

/** One event as apply_projected_events reads it (domain/projection.ts decides the values). */
function projectedRow(event: ProjectedEvent, seq: number) {
  const { activity: a, work: w, attention: c } = projectEvent(event);
  return {
    event_id: event.id,
    seq,
    tenant_id: event.tenantId,
    type: a.type,
    occurred_at: a.occurredAt,
    subject_kind: a.subjectKind,
    subject_id: a.subjectId,
    reason_code: a.reasonCode,
    state: a.state,
    actor: a.actor,
    work: w !== undefined,
    work_notification_id: w?.notificationId ?? null,
    work_type: w?.type ?? null,
    work_state: w?.state ?? null,
    work_reason_code: w?.reasonCode ?? null,
    work_created_at: w?.createdAt ?? null,
    attention: c !== undefined,
    attention_id: c ? attentionItemId(c.kind, c.subjectId) : null,
    attention_kind: c?.kind ?? null,
    attention_subject_id: c?.subjectId ?? null,
    attention_reason_code: c ? (c.open ? c.reasonCode : "") : null,
    attention_cause: c ? (c.open ? c.cause : "") : null,
    attention_open: c?.open ?? null,
  };
}

/**
 * Records each event (once) and applies it to work, attention and activity, and removes their
 * kept outbox rows, in one statement under the live projector's side of the projection lock;
 * in `db`'s own transaction when it is one (a rebuild's, which holds the lock exclusively).
 * Returns the ids recorded now (an id already recorded changed nothing).
 */
export async function applyEvents(
  db: Knex | Knex.Transaction,
  events: { event: ProjectedEvent; seq: number }[],
): Promise<Set<string>> {
  if (events.length === 0) return new Set();
  const json = JSON.stringify(events.map(({ event, seq }) => projectedRow(event, seq)));
  const rows = await queryRows<{ event_id: string }>(db, applyEventsSql, [json]);
  return new Set(rows.map((row) => row.event_id));
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

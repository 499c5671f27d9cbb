import type { Knex } from "@platform/service-kit/postgres";

export const name = "20261124200000_apply_projected_events";

/**
 * apply_projected_events: a fetch's events applied to the projections in one statement (one
 * round trip and one commit for the batch, where each event took a statement of its own between
 * BEGIN, the lock and COMMIT). It takes the live projector's side of the projection lock (shared;
 * a rebuild holds it exclusively, and a rebuild's own calls are in the transaction that holds it),
 * removes the events' kept outbox rows, records each event once (dedupe by id), and only for the
 * events it recorded now: their activity entries, and per work row and per attention item the
 * change of the batch's latest event (guarded by the stream sequence, as one event at a time
 * would leave them; a work row's created_at is its earliest event's). Returns the ids it recorded.
 *
 * `events` is a JSON array of objects with the keys of the record below (db/projection-store.ts
 * builds them from domain/projection.ts).
 */
export async function up(db: Knex): Promise<void> {
  await db.raw(`
    create function apply_projected_events(events jsonb) returns setof text
    language plpgsql as $$
    begin
      perform pg_advisory_xact_lock_shared(1886547818); -- PROJECTION_LOCK_KEY ("proj")
      return query
      with input as (
        select * from jsonb_to_recordset(events) as e(
          event_id text, seq bigint, tenant_id text, type text, occurred_at timestamptz,
          subject_kind text, subject_id text, reason_code text, state text, actor text,
          work boolean, work_notification_id text, work_type text, work_state text,
          work_reason_code text, work_created_at timestamptz,
          attention boolean, attention_id text, attention_kind text, attention_subject_id text,
          attention_reason_code text, attention_cause text, attention_open boolean)
      ), consumed as (
        delete from outbox o using input i where o.event_id = i.event_id
      ), recorded as (
        insert into projection_events (event_id, seq, tenant_id, type)
        select i.event_id, i.seq, i.tenant_id, i.type from input i
        on conflict (event_id) do nothing
        returning projection_events.event_id
      ), fresh as (
        select distinct on (i.event_id) i.* from input i join recorded r on r.event_id = i.event_id
        order by i.event_id, i.seq
      ), activity as (
        insert into projection_activity
          (tenant_id, event_id, seq, type, occurred_at, subject_kind, subject_id, reason_code, state, actor)
        select f.tenant_id, f.event_id, f.seq, f.type, f.occurred_at, f.subject_kind, f.subject_id,
               f.reason_code, f.state, f.actor
        from fresh f
        on conflict (tenant_id, event_id) do nothing
      ), work as (
        insert into projection_work (tenant_id, notification_id, type, state, reason_code, created_at, updated_at, seq)
        select distinct on (w.tenant_id, w.work_notification_id)
               w.tenant_id, w.work_notification_id, w.work_type, w.work_state, w.work_reason_code,
               first_value(w.work_created_at) over (
                 partition by w.tenant_id, w.work_notification_id order by w.seq),
               w.occurred_at, w.seq
        from fresh w where w.work
        order by w.tenant_id, w.work_notification_id, w.seq desc
        on conflict (tenant_id, notification_id) do update
          set type = excluded.type, state = excluded.state, reason_code = excluded.reason_code,
              updated_at = excluded.updated_at, seq = excluded.seq
          where projection_work.seq < excluded.seq
      ), attention as (
        insert into projection_attention
          (tenant_id, id, kind, subject_id, reason_code, cause, opened_at, event_id, open, seq)
        select distinct on (a.tenant_id, a.attention_id)
               a.tenant_id, a.attention_id, a.attention_kind, a.attention_subject_id,
               a.attention_reason_code, a.attention_cause, a.occurred_at, a.event_id, a.attention_open, a.seq
        from fresh a where a.attention
        order by a.tenant_id, a.attention_id, a.seq desc
        on conflict (tenant_id, id) do update
          set reason_code = excluded.reason_code, cause = excluded.cause, opened_at = excluded.opened_at,
              event_id = excluded.event_id, open = excluded.open, seq = excluded.seq
          where projection_attention.seq < excluded.seq
      )
      select r.event_id from recorded r;
    end $$`);
}

export async function down(db: Knex): Promise<void> {
  await db.raw("drop function apply_projected_events(jsonb)");
}

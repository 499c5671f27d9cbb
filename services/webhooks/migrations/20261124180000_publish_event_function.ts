import type { Knex } from "@platform/service-kit/postgres";

export const name = "20261124180000_publish_event_function";

/**
 * EventService's publish as one statement (one round trip, one commit): the outbox row of an
 * event this service has not recorded yet. Each statement of a PL/pgSQL function sees the commits
 * made before it started (read committed), so the second look at `events` sees a fan-out that
 * recorded the event and deleted its outbox row while the insert waited for it: the new row would
 * be an orphan the fan-out never removes, so it goes again. False when nothing was added.
 */
export async function up(db: Knex): Promise<void> {
  await db.raw(`
    create function publish_event_to_outbox(
      p_event_id text, p_subject text, p_payload bytea, p_traceparent text) returns boolean
    language plpgsql as $$
    begin
      perform 1 from events where id = p_event_id;
      if found then
        return false;
      end if;
      insert into outbox (event_id, subject, payload, traceparent)
      values (p_event_id, p_subject, p_payload, p_traceparent)
      on conflict (event_id) do nothing;
      if not found then
        return false;
      end if;
      perform 1 from events where id = p_event_id;
      if found then
        delete from outbox where event_id = p_event_id;
        return false;
      end if;
      return true;
    end $$`);
}

export async function down(db: Knex): Promise<void> {
  await db.raw("drop function publish_event_to_outbox");
}

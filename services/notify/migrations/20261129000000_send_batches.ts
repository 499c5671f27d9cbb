import type { Knex } from "@platform/service-kit/postgres";

export const name = "20261129000000_send_batches";

/**
 * A send's two statements for several sends at once, so sends that arrive together share one
 * statement and one commit (db/notification-store.ts gathers them: issue 33).
 *
 * record_sends: record_send for each send of the arrays, in their order, in one transaction. Each
 * send runs in a block of its own, so a send over its number's pace (PN429) or one that reaches an
 * allowance threshold (PN428: its event is needed) rolls back alone and is answered by its
 * SQLSTATE and detail; the others are kept. The allowance events' payloads are never passed here
 * (a send that needs one is sent again alone, with it). Any other error rolls back the whole batch.
 *
 * complete_sends: the outcome statement of db/notification-store.ts (command and transcript state,
 * the provider's message id, the allowance's refund or the key's result, the outcome's event) for
 * each send of the arrays, in their order, in one transaction; per send, whether its command
 * changed and whether its event was written.
 */
const recordSends = `
    create function record_sends(
      p_tenant text[], p_key text[], p_fingerprint text[], p_owner uuid[], p_lease_secs double precision[],
      p_ttl_secs double precision[], p_notification_id text[], p_entry_id text[], p_recipient text[],
      p_type text[], p_text text[], p_actor text[], p_delegation text[], p_request_id text[],
      p_allowance integer[], p_warn_at integer[], p_warn_id text[], p_full_id text[], p_traceparent text[],
      p_pace_key text[], p_pace_interval double precision[], p_pace_tolerance double precision[])
    returns table (outcome text, recorded_at timestamptz, month_sends integer, announced integer,
      failure text, failure_detail text)
    language plpgsql as $$
    declare
      v_sent record;
    begin
      for n in 1 .. coalesce(array_length(p_tenant, 1), 0) loop
        begin
          select * into v_sent from record_send(p_tenant[n], p_key[n], p_fingerprint[n], p_owner[n],
            p_lease_secs[n], p_ttl_secs[n], p_notification_id[n], p_entry_id[n], p_recipient[n], p_type[n],
            p_text[n], p_actor[n], p_delegation[n], p_request_id[n], p_allowance[n], p_warn_at[n],
            p_warn_id[n], '', '\\x'::bytea, p_full_id[n], '', '\\x'::bytea, p_traceparent[n],
            p_pace_key[n], p_pace_interval[n], p_pace_tolerance[n]);
          outcome := v_sent.outcome;
          recorded_at := v_sent.recorded_at;
          month_sends := v_sent.month_sends;
          announced := v_sent.announced;
          failure := null;
          failure_detail := null;
        exception when sqlstate 'PN429' or sqlstate 'PN428' then
          get stacked diagnostics failure = returned_sqlstate, failure_detail = pg_exception_detail;
          outcome := null;
          recorded_at := null;
          month_sends := null;
          announced := 0;
        end;
        return next;
      end loop;
    end $$`;

const completeSends = `
    create function complete_sends(
      p_state text[], p_failure_code text[], p_provider_code text[], p_delivery_status text[],
      p_notification_id text[], p_provider text[], p_provider_message_id text[], p_sent boolean[],
      p_refused boolean[], p_tenant text[], p_key text[], p_owner uuid[], p_result jsonb[],
      p_event_id text[], p_subject text[], p_payload bytea[], p_traceparent text[], p_published boolean[],
      p_announce boolean[])
    returns table (commands integer, announced integer)
    language plpgsql as $$
    begin
      for n in 1 .. coalesce(array_length(p_notification_id, 1), 0) loop
        with command as (
          update notification_commands set state = p_state[n], failure_code = p_failure_code[n],
            provider_code = p_provider_code[n], updated_at = now(), delivery_status = p_delivery_status[n],
            accepted_at = case when p_delivery_status[n] = 'accepted' then now() else accepted_at end,
            failed_at = case when p_delivery_status[n] = 'failed' then now() else failed_at end
          where id = p_notification_id[n] and state in ('dispatching', 'unknown')
          returning tenant_id, counted, month
        ), provider as (
          insert into provider_messages (notification_id, provider, provider_message_id)
          select p_notification_id[n], p_provider[n], p_provider_message_id[n] where p_sent[n]
          returning 1
        ), entry as (
          update conversation_messages set state = p_state[n], updated_at = now()
          where notification_id = p_notification_id[n]
          returning 1
        ), refund as (
          update monthly_sends m set sends = m.sends - 1 from command c
          where p_refused[n] and c.counted and m.tenant_id = c.tenant_id and m.month = c.month and m.sends > 0
          returning 1
        ), released as (
          delete from idempotency_keys
          where p_refused[n] and scope = p_tenant[n] and key = p_key[n] and owner = p_owner[n]
            and state = 'in_progress'
          returning 1
        ), completed as (
          update idempotency_keys set state = 'completed', result = p_result[n]
          where not p_refused[n] and scope = p_tenant[n] and key = p_key[n] and owner = p_owner[n]
            and state = 'in_progress'
          returning 1
        ), written as (
          insert into outbox (event_id, subject, payload, traceparent, published_at)
          select p_event_id[n], p_subject[n], p_payload[n], p_traceparent[n],
            case when p_published[n] then now() end
          from command where p_announce[n]
          on conflict (event_id) do nothing
          returning 1
        )
        select (select count(*) from command), (select count(*) from written) into commands, announced;
        return next;
      end loop;
    end $$`;

/** Adds the two functions; record_send and the single-send statements stay (the previous release uses them). */
export async function up(db: Knex): Promise<void> {
  await db.raw(recordSends);
  await db.raw(completeSends);
}

export async function down(db: Knex): Promise<void> {
  await db.raw(
    "drop function record_sends(text[], text[], text[], uuid[], double precision[], double precision[], text[], text[], text[], text[], text[], text[], text[], text[], integer[], integer[], text[], text[], text[], text[], double precision[], double precision[])",
  );
  await db.raw(
    "drop function complete_sends(text[], text[], text[], text[], text[], text[], text[], boolean[], boolean[], text[], text[], uuid[], jsonb[], text[], text[], bytea[], text[], boolean[], boolean[])",
  );
}

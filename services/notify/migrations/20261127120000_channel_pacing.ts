import type { Knex } from "@platform/service-kit/postgres";

export const name = "20261127120000_channel_pacing";

/**
 * Pacing (issue 32 item 6, docs/notifications.md "Pacing"): one GCRA row per number a send goes
 * through (`channel_pace`: its theoretical arrival time), and record_send with three more arguments
 * (the number's key, the emission interval and the tolerance, in seconds) that checks and advances
 * the row in the send's own first statement, with the database's clock: no extra commit, the same
 * for every notify replica. Over the pace it raises SQLSTATE PN429 with the wait (seconds) as the
 * detail, so the whole statement rolls back: no key, no count, no command, no transcript, no event.
 * An empty key skips pacing.
 */
export const recordSendV3 = `
    create function record_send(
      p_tenant text, p_key text, p_fingerprint text, p_owner uuid, p_lease_secs double precision,
      p_ttl_secs double precision, p_notification_id text, p_entry_id text, p_recipient text, p_type text,
      p_text text, p_actor text, p_delegation text, p_request_id text, p_allowance integer,
      p_warn_at integer, p_warn_id text, p_warn_subject text, p_warn_payload bytea,
      p_full_id text, p_full_subject text, p_full_payload bytea, p_traceparent text,
      p_pace_key text, p_pace_interval double precision, p_pace_tolerance double precision,
      out outcome text, out recorded_at timestamptz, out month_sends integer, out announced integer)
    language plpgsql as $$
    declare
      v_tenant record;
      v_month text := to_char(now() at time zone 'utc', 'YYYY-MM');
      v_counted boolean;
      v_tat timestamptz;
      v_now timestamptz;
      v_wait double precision;
    begin
      recorded_at := now();
      announced := 0;
      perform 1 from idempotency_keys where scope = p_tenant and key = p_key and expires_at >= now();
      if found then outcome := 'claimed'; return; end if;
      -- The tenant's plan lock, shared with every other send: a plan change (exclusive) waits for
      -- the sends in flight and the sends after it read the new plan.
      perform pg_advisory_xact_lock_shared(hashtextextended('notify.tenant_plan|' || p_tenant, 0));
      select activated, channel_ready, plan into v_tenant from tenants where id = p_tenant;
      if not found then outcome := 'tenant_not_found'; return; end if;
      if not v_tenant.activated then outcome := 'tenant_not_activated'; return; end if;
      if not v_tenant.channel_ready then outcome := 'channel_not_ready'; return; end if;
      perform 1 from recipient_opt_outs where tenant_id = p_tenant and recipient = p_recipient;
      if found then outcome := 'recipient_opted_out'; return; end if;

      -- A concurrent first attempt of the same key makes this wait until it commits, then conflict.
      insert into idempotency_keys (scope, key, fingerprint, state, owner, locked_until, expires_at)
      values (p_tenant, p_key, p_fingerprint, 'in_progress', p_owner,
              now() + make_interval(secs => p_lease_secs), now() + make_interval(secs => p_ttl_secs))
      on conflict (scope, key) do update
        set fingerprint = excluded.fingerprint, state = 'in_progress', owner = excluded.owner, result = null,
            created_at = now(), locked_until = excluded.locked_until, expires_at = excluded.expires_at
        where idempotency_keys.expires_at < now();
      if not found then outcome := 'claimed'; return; end if;

      -- The testing plan counts sends in one row per tenant and UTC month; the conditional
      -- increment serializes concurrent sends on that row, so the allowance is never overshot.
      v_counted := v_tenant.plan = 'testing';
      if v_counted then
        insert into monthly_sends (tenant_id, month, sends) values (p_tenant, v_month, 1)
        on conflict (tenant_id, month) do update set sends = monthly_sends.sends + 1
          where monthly_sends.sends < p_allowance
        returning monthly_sends.sends into month_sends;
        if not found then
          delete from idempotency_keys where scope = p_tenant and key = p_key and owner = p_owner;
          outcome := 'testing_allowance_exhausted';
          return;
        end if;
        -- Each threshold is marked on the month's row (locked by the increment) the first time
        -- it is reached, and announced in the same statement: once per tenant and month, even
        -- when a refund lowers the count and a later send reaches the threshold again.
        if month_sends >= p_warn_at and p_warn_id <> '' then
          update monthly_sends set warned_at = now()
          where tenant_id = p_tenant and month = v_month and warned_at is null;
          if found then
            insert into outbox (event_id, subject, payload, traceparent)
            values (p_warn_id, p_warn_subject, p_warn_payload, p_traceparent) on conflict (event_id) do nothing;
            announced := announced + 1;
          end if;
        end if;
        if month_sends >= p_allowance and p_full_id <> '' then
          update monthly_sends set exhausted_at = now()
          where tenant_id = p_tenant and month = v_month and exhausted_at is null;
          if found then
            insert into outbox (event_id, subject, payload, traceparent)
            values (p_full_id, p_full_subject, p_full_payload, p_traceparent) on conflict (event_id) do nothing;
            announced := announced + 1;
          end if;
        end if;
      end if;

      insert into notification_commands
        (id, tenant_id, idempotency_key, type, recipient, state, counted, month, request_id, created_at, updated_at)
      values (p_notification_id, p_tenant, p_key, p_type, p_recipient, 'dispatching', v_counted, v_month,
              p_request_id, recorded_at, recorded_at);
      insert into conversation_messages (id, tenant_id, recipient, notification_id, type, text, state,
        actor_reference, delegation_reference, created_at, updated_at)
      values (p_entry_id, p_tenant, p_recipient, p_notification_id, p_type, p_text, 'unknown', p_actor,
              p_delegation, recorded_at, recorded_at);

      -- Pacing (GCRA, domain/pacing.ts): last, so the number's row is locked only from here to the
      -- commit, and a send refused above never takes a slot. The row is locked before the clock is
      -- read, so the instants are the database's and in the order the sends pass the lock.
      if p_pace_key <> '' then
        select tat into v_tat from channel_pace where pace_key = p_pace_key for update;
        if not found then
          insert into channel_pace (pace_key, tat) values (p_pace_key, '-infinity') on conflict (pace_key) do nothing;
          select tat into v_tat from channel_pace where pace_key = p_pace_key for update;
        end if;
        v_now := clock_timestamp();
        v_tat := greatest(v_tat, v_now);
        v_wait := extract(epoch from (v_tat - v_now)) - p_pace_tolerance;
        if v_wait > 0 then
          -- Over the pace: the whole statement (key, count, command, transcript, events) rolls back.
          raise exception using errcode = 'PN429', message = 'channel paced', detail = v_wait::text;
        end if;
        update channel_pace set tat = v_tat + make_interval(secs => p_pace_interval)
        where pace_key = p_pace_key;
      end if;
      outcome := 'recorded';
    end $$`;

export async function up(db: Knex): Promise<void> {
  await db.schema.createTable("channel_pace", (table) => {
    table.text("pace_key").primary();
    // -infinity until the first send: every instant is after it.
    table.specificType("tat", "timestamptz").notNullable();
  });
  // Expand only: the previous release's record_send (23 arguments, unpaced) stays, so a notify of
  // the previous release still sends while a rollout runs or after a rollback. A later release
  // drops it, once no release in releases.json calls it.
  await db.raw(recordSendV3);
}

export async function down(db: Knex): Promise<void> {
  await db.raw(
    "drop function record_send(text, text, text, uuid, double precision, double precision, text, text, text, text, text, text, text, text, integer, integer, text, text, bytea, text, text, bytea, text, text, double precision, double precision)",
  );
  await db.schema.dropTable("channel_pace");
}

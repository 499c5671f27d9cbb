import type { Knex } from "@platform/service-kit/postgres";

export const name = "20261124170000_tenant_plan_changes";

/**
 * Plan changes (issue 22): why and when the plan last changed on the tenant; an index to recount
 * a month's sends when a tenant moves back to testing; and record_send with the tenant's plan
 * lock (shared: a plan change takes it exclusively, so every send is decided wholly before or
 * after a change) and the testing allowance's 80% / 100% events written in the send's own
 * statement, each once per tenant and month (deterministic event ids, `on conflict do nothing`).
 */
/** record_send as 20261122010000_create_notifications created it (what down restores). */
const recordSendV1 = `
    create function record_send(
      p_tenant text, p_key text, p_fingerprint text, p_owner uuid, p_lease_secs double precision,
      p_ttl_secs double precision, p_notification_id text, p_entry_id text, p_recipient text, p_type text,
      p_text text, p_actor text, p_delegation text, p_request_id text, p_allowance integer,
      out outcome text, out recorded_at timestamptz)
    language plpgsql as $$
    declare
      v_tenant record;
      v_month text := to_char(now() at time zone 'utc', 'YYYY-MM');
      v_counted boolean;
    begin
      recorded_at := now();
      perform 1 from idempotency_keys where scope = p_tenant and key = p_key and expires_at >= now();
      if found then outcome := 'claimed'; return; end if;
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
          where monthly_sends.sends < p_allowance;
        if not found then
          delete from idempotency_keys where scope = p_tenant and key = p_key and owner = p_owner;
          outcome := 'testing_allowance_exhausted';
          return;
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
      outcome := 'recorded';
    end $$`;

/** The previous release's record_send, taking the tenant's plan lock as recordSendV2 does. */
const recordSendV1Locked = recordSendV1
  .replace("create function", "create or replace function")
  .replace(
    "      select activated, channel_ready, plan into v_tenant from tenants where id = p_tenant;",
    "      perform pg_advisory_xact_lock_shared(hashtextextended('notify.tenant_plan|' || p_tenant, 0));\n" +
      "      select activated, channel_ready, plan into v_tenant from tenants where id = p_tenant;",
  );
if (!recordSendV1Locked.includes("pg_advisory_xact_lock_shared"))
  throw new Error("record_send v1: the plan lock was not added");

const recordSendV2 = `
    create function record_send(
      p_tenant text, p_key text, p_fingerprint text, p_owner uuid, p_lease_secs double precision,
      p_ttl_secs double precision, p_notification_id text, p_entry_id text, p_recipient text, p_type text,
      p_text text, p_actor text, p_delegation text, p_request_id text, p_allowance integer,
      p_warn_at integer, p_warn_id text, p_warn_subject text, p_warn_payload bytea,
      p_full_id text, p_full_subject text, p_full_payload bytea, p_traceparent text,
      out outcome text, out recorded_at timestamptz, out month_sends integer, out announced integer)
    language plpgsql as $$
    declare
      v_tenant record;
      v_month text := to_char(now() at time zone 'utc', 'YYYY-MM');
      v_counted boolean;
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
      outcome := 'recorded';
    end $$`;

export async function up(db: Knex): Promise<void> {
  await db.schema.alterTable("tenants", (table) => {
    table.text("plan_reason").nullable();
    table.timestamp("plan_changed_at", { useTz: true }).nullable();
  });
  // When the month's 80% and 100% were first reached (and announced).
  await db.schema.alterTable("monthly_sends", (table) => {
    table.timestamp("warned_at", { useTz: true }).nullable();
    table.timestamp("exhausted_at", { useTz: true }).nullable();
  });
  await db.schema.alterTable("notification_commands", (table) => {
    table.index(["tenant_id", "month"], "notification_commands_month_idx");
  });
  // Expand only: the previous release's record_send (the 15-argument one) stays, so a notify of
  // the previous release still sends while a rollout runs or after a rollback. It takes the same
  // shared plan lock now, so a plan change never splits one of its sends either. A later release
  // drops it, once no release in releases.json calls it.
  await db.raw(recordSendV1Locked);
  await db.raw(recordSendV2);
}

export async function down(db: Knex): Promise<void> {
  await db.raw(
    "drop function record_send(text, text, text, uuid, double precision, double precision, text, text, text, text, text, text, text, text, integer, integer, text, text, bytea, text, text, bytea, text)",
  );
  await db.raw(recordSendV1.replace("create function", "create or replace function"));
  await db.schema.alterTable("notification_commands", (table) => {
    table.dropIndex(["tenant_id", "month"], "notification_commands_month_idx");
  });
  await db.schema.alterTable("monthly_sends", (table) => {
    table.dropColumn("exhausted_at");
    table.dropColumn("warned_at");
  });
  await db.schema.alterTable("tenants", (table) => {
    table.dropColumn("plan_changed_at");
    table.dropColumn("plan_reason");
  });
}

import type { Knex } from "@platform/service-kit/postgres";

export const name = "20261122010000_create_notifications";

export async function up(db: Knex): Promise<void> {
  // Recipients who opted out of a tenant's messages (spec 4.2 consent), by phone digits.
  await db.schema.createTable("recipient_opt_outs", (table) => {
    table.text("tenant_id").notNullable().references("id").inTable("tenants").onDelete("cascade");
    table.text("recipient").notNullable();
    table.timestamp("created_at", { useTz: true }).notNullable().defaultTo(db.fn.now());
    table.primary(["tenant_id", "recipient"]);
  });
  // Sends counted against the testing plan's allowance, per tenant and UTC month ("YYYY-MM").
  await db.schema.createTable("monthly_sends", (table) => {
    table.text("tenant_id").notNullable().references("id").inTable("tenants").onDelete("cascade");
    table.text("month").notNullable();
    table.integer("sends").notNullable();
    table.primary(["tenant_id", "month"]);
    table.check("sends >= 0", [], "monthly_sends_sends_check");
  });
  // One row per notification command (one Idempotency-Key that got past the preconditions).
  // No foreign key to tenants on the two hot tables: every send already read its tenant, and a
  // key check per insert would lock the one tenant row from every concurrent send (multixacts).
  await db.schema.createTable("notification_commands", (table) => {
    table.text("id").primary();
    table.text("tenant_id").notNullable();
    table.text("idempotency_key").notNullable();
    table.text("type").notNullable();
    table.text("recipient").notNullable();
    table.text("state").notNullable();
    table.text("failure_code").nullable();
    // The provider's own error code, for operators; never shown to partners.
    table.text("provider_code").nullable();
    // Whether this send counted against the testing allowance (a refusal gives it back).
    table.boolean("counted").notNullable();
    table.text("month").notNullable();
    table.text("request_id").notNullable();
    table.timestamp("created_at", { useTz: true }).notNullable().defaultTo(db.fn.now());
    table.timestamp("updated_at", { useTz: true }).notNullable().defaultTo(db.fn.now());
    table.check("state in ('dispatching', 'sent', 'unknown', 'failed')", [], "notification_commands_state_check");
    table.index(["tenant_id", "idempotency_key"], "notification_commands_key_idx");
  });
  // The customer's conversation transcript: what was sent (or attempted), rendered.
  await db.schema.createTable("conversation_messages", (table) => {
    table.bigIncrements("seq").primary();
    table.text("id").notNullable().unique();
    table.text("tenant_id").notNullable();
    table.text("recipient").notNullable();
    table.text("notification_id").notNullable().references("id").inTable("notification_commands");
    table.text("type").notNullable();
    table.text("text").notNullable();
    table.text("state").notNullable();
    table.text("actor_reference").notNullable();
    table.text("delegation_reference").nullable();
    table.timestamp("created_at", { useTz: true }).notNullable().defaultTo(db.fn.now());
    table.timestamp("updated_at", { useTz: true }).notNullable().defaultTo(db.fn.now());
    table.check("state in ('sent', 'unknown', 'failed')", [], "conversation_messages_state_check");
    table.index(["tenant_id", "recipient", "seq"], "conversation_messages_recipient_idx");
  });
  // What the provider answered: its message id stays here, never shown to partners.
  await db.schema.createTable("provider_messages", (table) => {
    table.text("notification_id").primary().references("id").inTable("notification_commands");
    table.text("provider").notNullable();
    table.text("provider_message_id").notNullable();
    table.timestamp("created_at", { useTz: true }).notNullable().defaultTo(db.fn.now());
  });
  // Recording a send (before the provider is called) in one statement: one round trip and one
  // commit, and nothing written unless every precondition holds. Outcomes: claimed (the key is
  // taken: the caller answers the repeat), tenant_not_found, tenant_not_activated,
  // channel_not_ready, recipient_opted_out, testing_allowance_exhausted, recorded.
  await db.raw(`
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
    end $$`);
}

export async function down(db: Knex): Promise<void> {
  await db.raw("drop function record_send");
  await db.schema.dropTable("provider_messages");
  await db.schema.dropTable("conversation_messages");
  await db.schema.dropTable("notification_commands");
  await db.schema.dropTable("monthly_sends");
  await db.schema.dropTable("recipient_opt_outs");
}

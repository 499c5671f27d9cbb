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
}

export async function down(db: Knex): Promise<void> {
  await db.schema.dropTable("provider_messages");
  await db.schema.dropTable("conversation_messages");
  await db.schema.dropTable("notification_commands");
  await db.schema.dropTable("monthly_sends");
  await db.schema.dropTable("recipient_opt_outs");
}

import type { Knex } from "@platform/service-kit/postgres";

export const name = "20261127100000_tenant_channels";

/**
 * Each tenant's own WhatsApp number (issue 32): the WhatsApp Business Account and phone number it
 * sends from, its access token sealed with SECRETS_KEY (never stored in the clear), its approved
 * templates (overrides of the configured defaults), its throughput, its STOP/START keywords, and
 * what the last check of the number read from the Cloud API. And the customers' inbound keyword
 * messages (STOP, START), kept once per provider message id, numbered from the transcript's own
 * sequence so the transcript reads both in one order.
 */
export async function up(db: Knex): Promise<void> {
  await db.schema.createTable("tenant_channels", (table) => {
    table.text("tenant_id").primary().references("id").inTable("tenants").onDelete("cascade");
    table.text("waba_id").notNullable();
    // A number sends for one tenant only: its callbacks name the number, and find the tenant by it.
    table.text("phone_number_id").notNullable().unique();
    table.text("access_token_sealed").notNullable();
    table.jsonb("templates").notNullable().defaultTo("{}");
    table.integer("messages_per_second").notNullable().defaultTo(80);
    table.specificType("stop_keywords", "text[]").notNullable();
    table.specificType("start_keywords", "text[]").notNullable();
    // The last check of the number (GET /{phone-number-id} on the Cloud API, or a callback).
    table.text("display_phone_number").nullable();
    table.text("verified_name").nullable();
    table.text("quality_rating").nullable();
    table.text("number_status").nullable();
    table.text("check_result").nullable();
    table.text("check_reason").nullable();
    table.timestamp("checked_at", { useTz: true }).nullable();
    // The periodic check's lease: one replica checks a number at a time.
    table.timestamp("check_lease_until", { useTz: true }).nullable();
    table.timestamp("connected_at", { useTz: true }).notNullable().defaultTo(db.fn.now());
    table.timestamp("updated_at", { useTz: true }).notNullable().defaultTo(db.fn.now());
    table.check("messages_per_second between 1 and 1000", [], "tenant_channels_mps_check");
    table.check("check_result in ('pass', 'fail', 'unreachable')", [], "tenant_channels_check_result_check");
  });
  await db.schema.createTable("inbound_messages", (table) => {
    table.bigInteger("seq").primary().defaultTo(db.raw("nextval('conversation_messages_seq_seq')"));
    table.text("id").notNullable().unique();
    table.text("provider_message_id").notNullable().unique();
    table.text("tenant_id").notNullable().references("id").inTable("tenants").onDelete("cascade");
    table.text("recipient").notNullable();
    table.text("text").notNullable();
    table.text("action").notNullable();
    table.boolean("applied").notNullable();
    table.timestamp("sent_at", { useTz: true }).notNullable();
    table.timestamp("created_at", { useTz: true }).notNullable().defaultTo(db.fn.now());
    table.check("action in ('opt_out', 'opt_in')", [], "inbound_messages_action_check");
    table.index(["tenant_id", "recipient", "seq"], "inbound_messages_recipient_idx");
  });
}

export async function down(db: Knex): Promise<void> {
  await db.schema.dropTable("inbound_messages");
  await db.schema.dropTable("tenant_channels");
}

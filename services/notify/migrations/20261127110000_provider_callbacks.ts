import type { Knex } from "@platform/service-kit/postgres";

export const name = "20261127110000_provider_callbacks";

/**
 * Provider callbacks and delivery statuses (issue 32, items 3 and 4; docs/notifications.md).
 * Expand only: a notify of the previous release keeps working on this schema (it never reads the
 * new columns, and its sends leave delivery_status null until a callback or this release sets it).
 */
export async function up(db: Knex): Promise<void> {
  // Each signed body the provider POSTed, recorded in one insert before the gateway answers 200;
  // a provider retry of the same body has the same dedupe_key (its SHA-256) and is not recorded again.
  await db.schema.createTable("provider_callback_batches", (table) => {
    table.text("id").primary();
    table.text("provider").notNullable();
    table.text("dedupe_key").notNullable();
    // The raw bytes as signed (parsed again when applied).
    table.binary("body").notNullable();
    table.timestamp("received_at", { useTz: true }).notNullable().defaultTo(db.fn.now());
    // Null until every entry of the batch was applied (statuses, inbound messages, number updates).
    table.timestamp("applied_at", { useTz: true }).nullable();
    table.integer("attempts").notNullable().defaultTo(0);
    table.timestamp("next_attempt_at", { useTz: true }).notNullable().defaultTo(db.fn.now());
    table.text("last_error").nullable();
    table.unique(["provider", "dedupe_key"], { indexName: "provider_callback_batches_dedupe_key" });
  });
  await db.raw(
    "create index provider_callback_batches_unapplied on provider_callback_batches (next_attempt_at) where applied_at is null",
  );
  // A status whose provider message id no send has recorded yet (it arrived before the send's own
  // outcome committed): kept here and applied once provider_messages holds the id.
  await db.schema.createTable("pending_provider_statuses", (table) => {
    table.text("provider").notNullable();
    table.text("provider_message_id").notNullable();
    table.text("status").notNullable();
    table.timestamp("occurred_at", { useTz: true }).notNullable();
    table.text("provider_code").nullable();
    table.text("batch_id").notNullable();
    table.timestamp("received_at", { useTz: true }).notNullable().defaultTo(db.fn.now());
    table.primary(["provider", "provider_message_id", "status"]);
  });
  // Statuses name the provider's message id: find its notification by it.
  await db.raw("create index provider_messages_provider_message_id on provider_messages (provider_message_id)");
  // The delivery status of each notification and the time of each step (never backwards).
  await db.schema.alterTable("notification_commands", (table) => {
    table.text("delivery_status").nullable();
    table.text("delivery_failure_code").nullable();
    table.text("delivery_provider_code").nullable();
    table.timestamp("accepted_at", { useTz: true }).nullable();
    table.timestamp("sent_at", { useTz: true }).nullable();
    table.timestamp("delivered_at", { useTz: true }).nullable();
    table.timestamp("read_at", { useTz: true }).nullable();
    table.timestamp("failed_at", { useTz: true }).nullable();
  });
  await db.raw(
    `alter table notification_commands add constraint notification_commands_delivery_status_check
     check (delivery_status in ('accepted', 'sent', 'delivered', 'read', 'failed'))`,
  );
}

export async function down(db: Knex): Promise<void> {
  await db.raw("alter table notification_commands drop constraint notification_commands_delivery_status_check");
  await db.schema.alterTable("notification_commands", (table) => {
    for (const column of [
      "delivery_status",
      "delivery_failure_code",
      "delivery_provider_code",
      "accepted_at",
      "sent_at",
      "delivered_at",
      "read_at",
      "failed_at",
    ]) {
      table.dropColumn(column);
    }
  });
  await db.raw("drop index provider_messages_provider_message_id");
  await db.schema.dropTable("pending_provider_statuses");
  await db.schema.dropTable("provider_callback_batches");
}

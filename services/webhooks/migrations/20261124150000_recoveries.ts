import type { Knex } from "@platform/service-kit/postgres";

export const name = "20261124150000_recoveries";

/**
 * Recoveries (RecoverDeliveries): the job row with its progress and lease, and its items, the
 * deliveries it covers, fixed at creation (each redriven at most once, marked in the same
 * transaction as its redrive). And the cause of an endpoint's dead-letter pause.
 */
export async function up(db: Knex): Promise<void> {
  await db.schema.createTable("recoveries", (table) => {
    table.text("id").primary();
    table.text("tenant_id").notNullable();
    table.text("endpoint_id").notNullable().references("id").inTable("endpoints");
    table.timestamp("since", { useTz: true }).notNullable();
    table.timestamp("until", { useTz: true }).nullable();
    table.text("state").notNullable();
    table.integer("total").notNullable();
    table.integer("redriven").notNullable().defaultTo(0);
    table.integer("skipped").notNullable().defaultTo(0);
    table.text("failure_code").nullable();
    table.text("actor").nullable();
    // The runner holding the job, and until when (another replica takes it over after that).
    table.text("lease_owner").nullable();
    table.timestamp("leased_until", { useTz: true }).nullable();
    table.timestamp("created_at", { useTz: true }).notNullable();
    table.timestamp("started_at", { useTz: true }).nullable();
    table.timestamp("finished_at", { useTz: true }).nullable();
    table.timestamp("updated_at", { useTz: true }).notNullable();
    table.check("state in ('queued', 'running', 'completed', 'failed')", [], "recoveries_state_check");
  });
  await db.raw("create index recoveries_endpoint_idx on recoveries (endpoint_id, created_at desc)");
  // One active recovery per endpoint; the runners look for active ones.
  await db.raw(
    "create unique index recoveries_active_endpoint_key on recoveries (endpoint_id) where state in ('queued', 'running')",
  );
  await db.schema.createTable("recovery_items", (table) => {
    table.text("recovery_id").notNullable().references("id").inTable("recoveries").onDelete("cascade");
    table.text("delivery_id").notNullable().references("id").inTable("deliveries").onDelete("cascade");
    // The delivery's seq: the order the items are redriven in.
    table.bigInteger("seq").notNullable();
    table.timestamp("done_at", { useTz: true }).nullable();
    table.primary(["recovery_id", "delivery_id"]);
  });
  await db.raw("create index recovery_items_todo_idx on recovery_items (recovery_id, seq) where done_at is null");
  await db.raw("create index recovery_items_delivery_idx on recovery_items (delivery_id)");
  // What a recover selects: the endpoint's failed and dead-lettered deliveries by creation time.
  await db.raw(
    "create index deliveries_recoverable_idx on deliveries (endpoint_id, created_at) " +
      "where status in ('awaiting_retry', 'dead_lettered')",
  );
  await db.schema.alterTable("endpoints", (table) => {
    table.text("attention_cause").nullable();
    table.timestamp("attention_since", { useTz: true }).nullable();
  });
}

export async function down(db: Knex): Promise<void> {
  await db.schema.alterTable("endpoints", (table) => {
    table.dropColumn("attention_since");
    table.dropColumn("attention_cause");
  });
  await db.raw("drop index if exists deliveries_recoverable_idx");
  await db.schema.dropTable("recovery_items");
  await db.schema.dropTable("recoveries");
}

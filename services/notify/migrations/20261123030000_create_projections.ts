import type { Knex } from "@platform/service-kit/postgres";

export const name = "20261123030000_create_projections";

/**
 * The tenant's poll reads, projections of the EVENTS stream (src/events/projector.ts): every one
 * can be emptied and rebuilt from the stream. `seq` is the stream sequence of the event that last
 * changed a row: it orders the reads (newest first), makes the cursors, and keeps an older event
 * applied late from undoing a newer one.
 */
export async function up(db: Knex): Promise<void> {
  // Each event once: the projector's dedupe (a redelivery or a republished id changes nothing).
  await db.schema.createTable("projection_events", (table) => {
    table.text("event_id").primary();
    table.bigInteger("seq").notNullable();
    table.text("tenant_id").notNullable();
    table.text("type").notNullable();
  });
  await db.schema.createTable("projection_work", (table) => {
    table.text("tenant_id").notNullable();
    table.text("notification_id").notNullable();
    table.text("type").notNullable();
    table.text("state").notNullable();
    table.text("reason_code").notNullable().defaultTo("");
    table.timestamp("created_at", { useTz: true }).notNullable();
    table.timestamp("updated_at", { useTz: true }).notNullable();
    table.bigInteger("seq").notNullable();
    table.primary(["tenant_id", "notification_id"]);
    table.index(["tenant_id", "seq"]);
  });
  await db.schema.createTable("projection_attention", (table) => {
    table.text("tenant_id").notNullable();
    table.text("id").notNullable();
    table.text("kind").notNullable();
    table.text("subject_id").notNullable();
    table.text("reason_code").notNullable().defaultTo("");
    table.timestamp("opened_at", { useTz: true }).notNullable();
    table.text("event_id").notNullable();
    // Closed items stay (open = false) so an opening event applied after its closing one cannot reopen it.
    table.boolean("open").notNullable();
    table.bigInteger("seq").notNullable();
    table.primary(["tenant_id", "id"]);
    table.index(["tenant_id", "open", "seq"]);
  });
  await db.schema.createTable("projection_activity", (table) => {
    table.text("tenant_id").notNullable();
    table.text("event_id").notNullable();
    table.bigInteger("seq").notNullable();
    table.text("type").notNullable();
    table.timestamp("occurred_at", { useTz: true }).notNullable();
    table.text("subject_kind").notNullable().defaultTo("");
    table.text("subject_id").notNullable().defaultTo("");
    table.text("reason_code").notNullable().defaultTo("");
    table.text("state").notNullable().defaultTo("");
    table.primary(["tenant_id", "event_id"]);
    table.index(["tenant_id", "seq"]);
  });
}

export async function down(db: Knex): Promise<void> {
  for (const table of ["projection_activity", "projection_attention", "projection_work", "projection_events"]) {
    await db.schema.dropTable(table);
  }
}

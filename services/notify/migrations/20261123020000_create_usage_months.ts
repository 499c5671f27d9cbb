import type { Knex } from "@platform/service-kit/postgres";

export const name = "20261123020000_create_usage_months";

/**
 * Token usage per tenant and UTC calendar month ("YYYY-MM"), with when each cap was first reached
 * that month and the id of the usage.threshold_crossed event announcing it (at most one per cap and
 * month: the row is the lock concurrent records serialize on). usage_records remembers the producers'
 * record ids so a repeated record is counted once.
 */
export async function up(db: Knex): Promise<void> {
  await db.schema.createTable("usage_months", (table) => {
    table.text("tenant_id").notNullable().references("id").inTable("tenants").onDelete("cascade");
    table.text("month").notNullable();
    table.bigInteger("tokens_used").notNullable().defaultTo(0);
    table.timestamp("soft_crossed_at", { useTz: true }).nullable();
    table.bigInteger("soft_crossed_cap").nullable();
    table.bigInteger("soft_crossed_tokens").nullable();
    table.text("soft_event_id").nullable();
    table.timestamp("hard_crossed_at", { useTz: true }).nullable();
    table.bigInteger("hard_crossed_cap").nullable();
    table.bigInteger("hard_crossed_tokens").nullable();
    table.text("hard_event_id").nullable();
    table.primary(["tenant_id", "month"]);
    table.check("tokens_used >= 0", [], "usage_months_tokens_used_check");
  });
  await db.schema.createTable("usage_records", (table) => {
    table.text("tenant_id").notNullable().references("id").inTable("tenants").onDelete("cascade");
    table.text("record_id").notNullable();
    table.text("month").notNullable();
    table.bigInteger("tokens").notNullable();
    table.timestamp("recorded_at", { useTz: true }).notNullable();
    table.primary(["tenant_id", "record_id"]);
  });
}

export async function down(db: Knex): Promise<void> {
  await db.schema.dropTable("usage_records");
  await db.schema.dropTable("usage_months");
}

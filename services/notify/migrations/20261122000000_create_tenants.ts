import type { Knex } from "@platform/service-kit/postgres";
import { createIdempotencyTable } from "@platform/service-kit/idempotency";

export const name = "20261122000000_create_tenants";

export async function up(db: Knex): Promise<void> {
  await db.schema.createTable("tenants", (table) => {
    table.text("id").primary();
    table.text("name").notNullable();
    table.text("status").notNullable().defaultTo("pending_activation");
    table.boolean("activated").notNullable().defaultTo(false);
    table.boolean("channel_ready").notNullable().defaultTo(false);
    table.bigInteger("version").notNullable().defaultTo(1);
    table.text("last_error_code").nullable();
    table.text("plan").notNullable().defaultTo("testing");
    table.timestamp("created_at", { useTz: true }).notNullable().defaultTo(db.fn.now());
    table.timestamp("updated_at", { useTz: true }).notNullable().defaultTo(db.fn.now());
    table.check("status in ('pending_activation', 'active')", [], "tenants_status_check");
    table.check("plan in ('testing', 'commercial')", [], "tenants_plan_check");
  });
  await db.schema.createTable("usage_limits", (table) => {
    table.text("tenant_id").primary().references("id").inTable("tenants").onDelete("cascade");
    table.bigInteger("soft_cap").notNullable();
    table.bigInteger("hard_cap").notNullable();
    table.bigInteger("version").notNullable().defaultTo(1);
    table.timestamp("updated_at", { useTz: true }).notNullable().defaultTo(db.fn.now());
  });
  await createIdempotencyTable(db);
}

export async function down(db: Knex): Promise<void> {
  await db.schema.dropTable("idempotency_keys");
  await db.schema.dropTable("usage_limits");
  await db.schema.dropTable("tenants");
}

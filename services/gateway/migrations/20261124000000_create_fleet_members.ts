import type { Knex } from "@platform/service-kit/postgres";

export const name = "20261124000000_create_fleet_members";

/**
 * One row per running gateway, refreshed every heartbeat: the gateways count the live rows to
 * split the fleet-wide rate limit (src/db/fleet-store.ts). Times are the database's clock only.
 */
export async function up(db: Knex): Promise<void> {
  await db.schema.createTable("fleet_members", (table) => {
    table.text("id").primary();
    table.timestamp("started_at", { useTz: true }).notNullable().defaultTo(db.fn.now());
    table.timestamp("heartbeat_at", { useTz: true }).notNullable().defaultTo(db.fn.now());
  });
}

export async function down(db: Knex): Promise<void> {
  await db.schema.dropTable("fleet_members");
}

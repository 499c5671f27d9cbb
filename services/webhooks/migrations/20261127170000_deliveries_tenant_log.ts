import type { Knex } from "@platform/service-kit/postgres";

export const name = "20261127170000_deliveries_tenant_log";

/**
 * The message log (ListDeliveries without an endpoint): a tenant's deliveries newest first across
 * its endpoints, paged by seq. Without this index the page would sort every delivery of the table.
 */
export async function up(db: Knex): Promise<void> {
  await db.raw("create index deliveries_tenant_log_idx on deliveries (tenant_id, seq desc)");
}

export async function down(db: Knex): Promise<void> {
  await db.raw("drop index if exists deliveries_tenant_log_idx");
}

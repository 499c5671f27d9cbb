import type { Knex } from "@platform/service-kit/postgres";

export const name = "20261122000000_create_api_keys";

export async function up(db: Knex): Promise<void> {
  await db.schema.createTable("api_keys", (table) => {
    table.text("id").primary();
    table.text("name").notNullable();
    // SHA-256 of the whole key; the key itself is never stored.
    table.binary("digest").notNullable();
    table.specificType("scopes", "text[]").notNullable().defaultTo("{}");
    table.specificType("tenant_ids", "text[]").notNullable().defaultTo("{}");
    table.timestamp("created_at", { useTz: true }).notNullable().defaultTo(db.fn.now());
    table.timestamp("revoked_at", { useTz: true }).nullable();
  });
}

export async function down(db: Knex): Promise<void> {
  await db.schema.dropTable("api_keys");
}

import type { Knex } from "@platform/service-kit/postgres";

export const name = "20261122000000_create_pets";

export async function up(db: Knex): Promise<void> {
  await db.schema.createTable("pets", (table) => {
    table.bigIncrements("id").primary();
    table.text("name").notNullable();
    table.bigInteger("category_id").notNullable();
    table.text("status").notNullable().defaultTo("available");
    table.timestamp("created_at", { useTz: true }).notNullable().defaultTo(db.fn.now());
    table.check("status in ('available', 'pending', 'sold')", [], "pets_status_check");
    table.check("category_id > 0", [], "pets_category_id_check");
    // Listing with a status filter walks (status, id) in id order.
    table.index(["status", "id"], "pets_status_id_idx");
  });
}

export async function down(db: Knex): Promise<void> {
  await db.schema.dropTable("pets");
}

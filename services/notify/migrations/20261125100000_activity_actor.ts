import type { Knex } from "@platform/service-kit/postgres";

export const name = "20261125100000_activity_actor";

/**
 * Who did what the activity entry records, when a person did (`console:<userId>`, from the
 * event's `actor`); "" for everything else. Rows projected before it read as "" (a rebuild fills
 * them from the stream).
 */
export async function up(db: Knex): Promise<void> {
  await db.schema.alterTable("projection_activity", (table) => {
    table.text("actor").notNullable().defaultTo("");
  });
}

export async function down(db: Knex): Promise<void> {
  await db.schema.alterTable("projection_activity", (table) => {
    table.dropColumn("actor");
  });
}

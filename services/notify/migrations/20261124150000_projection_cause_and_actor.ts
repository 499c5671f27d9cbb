import type { Knex } from "@platform/service-kit/postgres";

export const name = "20261124150000_projection_cause_and_actor";

/**
 * The cause class of an attention item (a webhook dead-letter's error class) and the actor of an
 * activity entry (who did a console or API action). Empty for rows projected before: a rebuild
 * (admin projection rebuild) fills them from the stream.
 */
export async function up(db: Knex): Promise<void> {
  await db.schema.alterTable("projection_attention", (table) => {
    table.text("cause").notNullable().defaultTo("");
  });
  await db.schema.alterTable("projection_activity", (table) => {
    table.text("actor").notNullable().defaultTo("");
  });
}

export async function down(db: Knex): Promise<void> {
  await db.schema.alterTable("projection_activity", (table) => {
    table.dropColumn("actor");
  });
  await db.schema.alterTable("projection_attention", (table) => {
    table.dropColumn("cause");
  });
}

import { createIdempotencyTable, IDEMPOTENCY_TABLE } from "@platform/service-kit/idempotency";
import type { Knex } from "@platform/service-kit/postgres";

export const name = "20261201000000_create_idempotency_keys";

/** Idempotency-Keys of pet creations, recorded in the same transaction as the pet. */
export async function up(db: Knex): Promise<void> {
  await createIdempotencyTable(db);
}

export async function down(db: Knex): Promise<void> {
  await db.schema.dropTable(IDEMPOTENCY_TABLE);
}

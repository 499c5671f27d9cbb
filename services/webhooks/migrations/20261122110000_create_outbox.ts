import { createOutboxTable, dropOutboxTable } from "@platform/service-kit/outbox";
import type { Knex } from "@platform/service-kit/postgres";

export const name = "20261122110000_create_outbox";

/**
 * The outbox of events published through the internal EventService: written in the same
 * transaction as the publish call, drained to the JetStream stream EVENTS by the relay.
 */
export async function up(db: Knex): Promise<void> {
  await createOutboxTable(db);
}

export async function down(db: Knex): Promise<void> {
  await dropOutboxTable(db);
}

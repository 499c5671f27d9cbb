import { addOutboxPublishedAt, createOutboxTable, dropOutboxTable } from "@platform/service-kit/outbox";
import type { Knex } from "@platform/service-kit/postgres";

export const name = "20261123000000_create_outbox";

/**
 * The events notify announces (usage thresholds, activation and capability transitions, the
 * outcomes of notification commands), written in the transaction of the change and relayed to
 * the EVENTS stream. Rows are kept (published_at) until notify's own projector has recorded them.
 */
export async function up(db: Knex): Promise<void> {
  await createOutboxTable(db);
  await addOutboxPublishedAt(db);
}

export async function down(db: Knex): Promise<void> {
  await dropOutboxTable(db);
}

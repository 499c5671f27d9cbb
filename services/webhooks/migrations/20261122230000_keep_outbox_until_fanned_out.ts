import { addOutboxPublishedAt, dropOutboxPublishedAt } from "@platform/service-kit/outbox";
import type { Knex } from "@platform/service-kit/postgres";

export const name = "20261122230000_keep_outbox_until_fanned_out";

/**
 * An outbox row stays until the fan-out has recorded its event (a nats-server that lost its store
 * loses the events it had not handed to the fan-out yet): the relay marks it published, the fan-out
 * deletes it, and the relay publishes it again when it is still there long after.
 */
export async function up(db: Knex): Promise<void> {
  await addOutboxPublishedAt(db);
}

export async function down(db: Knex): Promise<void> {
  await dropOutboxPublishedAt(db);
}

import { addOutboxTraceparent, dropOutboxTraceparent } from "@platform/service-kit/outbox";
import type { Knex } from "@platform/service-kit/postgres";

export const name = "20261124120000_outbox_traceparent";

/** The W3C trace context of the change that wrote an outbox row; the relay sends it as the NATS `traceparent` header. */
export async function up(db: Knex): Promise<void> {
  await addOutboxTraceparent(db);
}

export async function down(db: Knex): Promise<void> {
  await dropOutboxTraceparent(db);
}

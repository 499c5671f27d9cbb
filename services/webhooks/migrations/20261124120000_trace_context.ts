import { addOutboxTraceparent, dropOutboxTraceparent } from "@platform/service-kit/outbox";
import type { Knex } from "@platform/service-kit/postgres";

export const name = "20261124120000_trace_context";

/**
 * The W3C trace context travels with an event: on its outbox row (the relay sends it as the NATS
 * `traceparent` header) and on each delivery the fan-out makes of it (every attempt's span is its
 * child). Nullable: untraced events and rows written before this migration have none.
 */
export async function up(db: Knex): Promise<void> {
  await addOutboxTraceparent(db);
  await db.schema.alterTable("deliveries", (table) => {
    table.text("traceparent").nullable();
  });
}

export async function down(db: Knex): Promise<void> {
  await db.schema.alterTable("deliveries", (table) => {
    table.dropColumn("traceparent");
  });
  await dropOutboxTraceparent(db);
}

/**
 * The webhooks service's internal facts for the tenant projections (events-contract.md):
 * `webhook.endpoint_dead_lettered` when a dead-lettered delivery pauses its endpoint, and
 * `webhook.endpoint_resumed` when an endpoint paused for that reason is resumed. Written to the
 * webhooks outbox in the transaction of the change; the relay publishes them after the commit.
 * They are not in the webhook catalog: the fan-out ignores them (only notify's projector uses them).
 */
import { busEventOutboxEntry, newEventId } from "@platform/service-kit/event-bus";
import { appendToOutbox } from "@platform/service-kit/outbox";
import type { Knex } from "@platform/service-kit/postgres";
import { ENDPOINT_DEAD_LETTERED, ENDPOINT_RESUMED } from "../domain/endpoint.js";

export interface EndpointEvents {
  namespace: string;
  /** Wakes the outbox relay (after the commit). */
  kick(): void;
}

async function append(
  trx: Knex | Knex.Transaction,
  namespace: string,
  tenantId: string,
  type: string,
  object: Record<string, unknown>,
  traceparent: string | null | undefined,
): Promise<void> {
  const event = { id: newEventId(), type, tenantId, occurredAt: new Date(), object };
  await appendToOutbox(trx, busEventOutboxEntry(namespace, event, traceparent ?? undefined));
}

export function appendEndpointDeadLettered(
  trx: Knex | Knex.Transaction,
  namespace: string,
  /** `traceparent`: the dead-lettered delivery's (its event's trace). */
  change: { tenantId: string; endpointId: string; deliveryId: string; traceparent?: string | null },
): Promise<void> {
  return append(
    trx,
    namespace,
    change.tenantId,
    ENDPOINT_DEAD_LETTERED,
    {
      endpoint_id: change.endpointId,
      delivery_id: change.deliveryId,
      reason_code: ENDPOINT_DEAD_LETTERED,
    },
    change.traceparent,
  );
}

export function appendEndpointResumed(
  trx: Knex | Knex.Transaction,
  namespace: string,
  /** `traceparent`: the resume call's. */
  change: { tenantId: string; endpointId: string; traceparent?: string | undefined },
): Promise<void> {
  return append(
    trx,
    namespace,
    change.tenantId,
    ENDPOINT_RESUMED,
    { endpoint_id: change.endpointId },
    change.traceparent,
  );
}

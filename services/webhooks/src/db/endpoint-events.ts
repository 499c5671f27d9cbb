/**
 * The webhooks service's internal facts for the tenant projections (events-contract.md), each with
 * the actor when the caller named one: `webhook.endpoint_dead_lettered` when a dead-lettered
 * delivery pauses its endpoint (with the error class of its last attempt as `cause`),
 * `webhook.endpoint_resumed` on every resume (it closes the dead-letter attention item), one fact
 * per other console or API action (created, updated, deleted, paused, secret rotated, delivery
 * redriven, test delivery sent), and `webhook.endpoint_recovery_started` / `_finished` around a
 * recovery. Written to the webhooks outbox in the transaction of the change; the relay publishes
 * them after the commit. They are not in the webhook catalog: the fan-out ignores them (only
 * notify's projector uses them).
 */
import { busEventOutboxEntry, newEventId } from "@platform/service-kit/event-bus";
import { appendToOutbox } from "@platform/service-kit/outbox";
import type { Knex } from "@platform/service-kit/postgres";
import {
  ENDPOINT_DEAD_LETTERED,
  ENDPOINT_RECOVERY_FINISHED,
  ENDPOINT_RECOVERY_STARTED,
  ENDPOINT_RESUMED,
  type EndpointActionType,
} from "../domain/endpoint.js";

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
  change: {
    tenantId: string;
    endpointId: string;
    deliveryId: string;
    traceparent?: string | null;
    cause: string | null;
  },
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
      // The error class of the failed last attempt ("http_5xx", "timeout", ...): a code, never text.
      ...(change.cause ? { cause: change.cause } : {}),
    },
    change.traceparent,
  );
}

/** On every resume; it also closes the dead-letter attention item when one is open. */
export function appendEndpointResumed(
  trx: Knex | Knex.Transaction,
  namespace: string,
  /** `traceparent`: the resume call's. */
  change: { tenantId: string; endpointId: string; actor?: string | null; traceparent?: string | undefined },
): Promise<void> {
  return append(
    trx,
    namespace,
    change.tenantId,
    ENDPOINT_RESUMED,
    { endpoint_id: change.endpointId, ...(change.actor ? { actor: change.actor } : {}) },
    change.traceparent,
  );
}

/** A console or API action on an endpoint or one of its deliveries (the activity feed). */
export function appendEndpointAction(
  trx: Knex | Knex.Transaction,
  namespace: string,
  /** `traceparent`: the call's. */
  action: {
    tenantId: string;
    type: EndpointActionType;
    endpointId: string;
    deliveryId?: string;
    actor: string | null;
    traceparent?: string | undefined;
  },
): Promise<void> {
  return append(
    trx,
    namespace,
    action.tenantId,
    action.type,
    {
      endpoint_id: action.endpointId,
      ...(action.deliveryId ? { delivery_id: action.deliveryId } : {}),
      ...(action.actor ? { actor: action.actor } : {}),
    },
    action.traceparent,
  );
}

export function appendRecoveryStarted(
  trx: Knex | Knex.Transaction,
  namespace: string,
  recovery: { tenantId: string; endpointId: string; id: string; state: string; actor: string | null },
  traceparent?: string,
): Promise<void> {
  return append(
    trx,
    namespace,
    recovery.tenantId,
    ENDPOINT_RECOVERY_STARTED,
    {
      endpoint_id: recovery.endpointId,
      recovery_id: recovery.id,
      state: recovery.state,
      ...(recovery.actor ? { actor: recovery.actor } : {}),
    },
    traceparent,
  );
}

export function appendRecoveryFinished(
  trx: Knex | Knex.Transaction,
  namespace: string,
  recovery: { tenantId: string; endpointId: string; id: string; state: string; failureCode: string | null },
): Promise<void> {
  return append(
    trx,
    namespace,
    recovery.tenantId,
    ENDPOINT_RECOVERY_FINISHED,
    {
      endpoint_id: recovery.endpointId,
      recovery_id: recovery.id,
      state: recovery.state,
      ...(recovery.failureCode ? { reason_code: recovery.failureCode } : {}),
    },
    undefined,
  );
}

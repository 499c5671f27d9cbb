import type { IdempotencyOptions } from "@platform/service-kit/idempotency";
import { mutationsOf } from "@platform/service-kit/mutation";
import type { Knex } from "@platform/service-kit/postgres";
import type { EventOutbox } from "../db/event-outbox.js";
import { requireTenantId } from "../domain/tenant.js";

/**
 * notify's `declareMutation` (service-kit mutation.ts): every notify mutation runs with notify's
 * tenant check (an unknown or malformed id is "not found", as on every read) and kicks notify's
 * outbox relay after a first commit that wrote events. `idempotency`: for the run-once methods
 * (those with an Idempotency-Key); `events`: for the services that announce.
 */
export function notifyMutations(deps: { db: Knex; idempotency?: IdempotencyOptions; events?: EventOutbox }) {
  const { events } = deps;
  return mutationsOf({
    db: deps.db,
    idempotency: deps.idempotency,
    tenantOf: ({ tenantId }) => requireTenantId(tenantId),
    kick: events && (() => events.kick()),
  });
}

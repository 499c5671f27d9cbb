/**
 * webhooks.v1.WebhookService: a tenant's endpoints and their secrets, the event catalog, and the
 * delivery ledger (list, inspect, redrive, stats, test deliveries, recoveries), one resource per
 * file under webhook-service/. Every mutation is declared (service-kit's declareMutation): it runs
 * once per Idempotency-Key (scope: the tenant), records its fact in its transaction, and after a
 * first commit logs, kicks the relay and enqueues the deliveries it made due.
 */
import type { WebhookServiceService } from "@platform/proto/webhooks/v1";
import type { UnaryHandlers } from "@platform/service-kit/grpc-server";
import { webhookContextOf, type WebhookServiceDeps } from "./webhook-service/context.js";
import { endpointHandlers } from "./webhook-service/endpoints.js";
import { eventTypeHandlers } from "./webhook-service/event-types.js";
import { ledgerHandlers } from "./webhook-service/ledger.js";
import { recoveryHandlers } from "./webhook-service/recoveries.js";
import { secretHandlers } from "./webhook-service/secrets.js";
import { testDeliveryHandlers } from "./webhook-service/test-deliveries.js";

export type { WebhookServiceDeps } from "./webhook-service/context.js";

export function createWebhookService(deps: WebhookServiceDeps): UnaryHandlers<typeof WebhookServiceService> {
  const ctx = webhookContextOf(deps);
  return {
    ...endpointHandlers(ctx),
    ...secretHandlers(ctx),
    ...eventTypeHandlers(),
    ...ledgerHandlers(ctx),
    ...testDeliveryHandlers(ctx),
    ...recoveryHandlers(ctx),
  };
}

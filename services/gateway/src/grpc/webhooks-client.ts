import { WebhookServiceService } from "@platform/proto/webhooks/v1";
import { createClient, type ServiceClient } from "@platform/service-kit/grpc-client";

/** The gateway's view of webhooks.v1.WebhookService. */
export type WebhooksClient = ServiceClient<typeof WebhookServiceService>;

export function createWebhooksClient(address: string, timeoutMs: number): WebhooksClient {
  return createClient(WebhookServiceService, address, { timeoutMs });
}

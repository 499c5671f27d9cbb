import type { ChannelInterface } from "@grpc/grpc-js";
import { WebhookServiceService } from "@platform/proto/webhooks/v1";
import { createClient, type ServiceClient } from "@platform/service-kit/grpc-client";

/** The gateway's view of webhooks.v1.WebhookService. */
export type WebhooksClient = ServiceClient<typeof WebhookServiceService>;

export function createWebhooksClient(channelOrAddress: ChannelInterface | string, timeoutMs: number): WebhooksClient {
  return createClient(WebhookServiceService, channelOrAddress, { timeoutMs });
}

import type { ChannelInterface } from "@grpc/grpc-js";
import { NotificationServiceService, TenantServiceService } from "@platform/proto/notify/v1";
import { ActivationServiceService } from "@platform/proto/notify/v1/activation";
import { UsageServiceService } from "@platform/proto/notify/v1/usage";
import {
  NotificationStatusServiceService,
  ProviderCallbackServiceService,
} from "@platform/proto/notify/v1/provider-callbacks";
import { ChannelServiceService } from "@platform/proto/notify/v1/channel";
import { createClient, type ServiceClient } from "@platform/service-kit/grpc-client";

/**
 * What the gateway and the admin CLI call on notify, over one channel: notify.v1.TenantService,
 * NotificationService, ActivationService, UsageService (usage entering through the internal
 * contract: admin `usage record`), ChannelService (a tenant's own number), ProviderCallbackService
 * (the provider's signed callbacks) and NotificationStatusService (a notification's delivery status).
 */
const notifyServices = {
  ...TenantServiceService,
  ...NotificationServiceService,
  ...ActivationServiceService,
  ...UsageServiceService,
  ...ProviderCallbackServiceService,
  ...NotificationStatusServiceService,
  ...ChannelServiceService,
};

export type NotifyClient = ServiceClient<typeof notifyServices>;

export function createNotifyClient(channelOrAddress: ChannelInterface | string, timeoutMs: number): NotifyClient {
  return createClient(notifyServices, channelOrAddress, { timeoutMs });
}

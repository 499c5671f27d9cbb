import { NotificationServiceService, TenantServiceService } from "@platform/proto/notify/v1";
import { ActivationServiceService } from "@platform/proto/notify/v1/activation";
import { UsageServiceService } from "@platform/proto/notify/v1/usage";
import { ChannelServiceService } from "@platform/proto/notify/v1/channel";
import { createClient, type ServiceClient } from "@platform/service-kit/grpc-client";

/**
 * What the gateway and the admin CLI call on notify, over one channel: notify.v1.TenantService,
 * NotificationService, ActivationService, UsageService and ChannelService (usage entering through the internal
 * contract: admin `usage record`).
 */
const notifyServices = {
  ...TenantServiceService,
  ...NotificationServiceService,
  ...ActivationServiceService,
  ...UsageServiceService,
  ...ChannelServiceService,
};

export type NotifyClient = ServiceClient<typeof notifyServices>;

export function createNotifyClient(address: string, timeoutMs: number): NotifyClient {
  return createClient(notifyServices, address, { timeoutMs });
}

import { credentials } from "@grpc/grpc-js";
import {
  NotificationServiceClient,
  NotificationServiceService,
  TenantServiceClient,
  TenantServiceService,
  type ActivateTenantRequest,
  type ActivateTenantResponse,
  type CreateTenantRequest,
  type CreateTenantResponse,
  type GetTenantRequest,
  type GetTenantResponse,
  type GetUsageLimitsRequest,
  type GetUsageLimitsResponse,
  type ListConversationMessagesRequest,
  type ListConversationMessagesResponse,
  type SendNotificationRequest,
  type SendNotificationResponse,
  type SetRecipientConsentRequest,
  type SetRecipientConsentResponse,
  type SetChannelStateRequest,
  type SetChannelStateResponse,
  type SetUsageLimitsRequest,
  type SetUsageLimitsResponse,
} from "@platform/proto/notify/v1";
import {
  ActivationServiceClient,
  ActivationServiceService,
  type GetActivationRequest,
  type GetActivationResponse,
  type GetCapabilitiesRequest,
  type GetCapabilitiesResponse,
  type ReportCapabilityCheckRequest,
  type ReportCapabilityCheckResponse,
  type StartActivationRequest,
  type StartActivationResponse,
} from "@platform/proto/notify/v1/activation";
import {
  UsageServiceClient,
  UsageServiceService,
  type GetUsageRequest,
  type GetUsageResponse,
  type RecordUsageRequest,
  type RecordUsageResponse,
} from "@platform/proto/notify/v1/usage";
import { callUnary } from "@platform/service-kit/grpc-client";
import { GRPC_CHANNEL_OPTIONS } from "@platform/service-kit/grpc-server";
import type { CallOptions } from "./catalog-client.js";

/** The gateway's (and admin CLI's) view of notify.v1.TenantService. */
export interface NotifyClient {
  createTenant(request: CreateTenantRequest, options: CallOptions): Promise<CreateTenantResponse>;
  getTenant(request: GetTenantRequest, options: CallOptions): Promise<GetTenantResponse>;
  activateTenant(request: ActivateTenantRequest, options: CallOptions): Promise<ActivateTenantResponse>;
  setChannelState(request: SetChannelStateRequest, options: CallOptions): Promise<SetChannelStateResponse>;
  setUsageLimits(request: SetUsageLimitsRequest, options: CallOptions): Promise<SetUsageLimitsResponse>;
  getUsageLimits(request: GetUsageLimitsRequest, options: CallOptions): Promise<GetUsageLimitsResponse>;
  /** notify.v1.UsageService: the current UTC month's token usage. */
  getUsage(request: GetUsageRequest, options: CallOptions): Promise<GetUsageResponse>;
  /** notify.v1.UsageService: usage entering through the internal contract (admin `usage record`). */
  recordUsage(request: RecordUsageRequest, options: CallOptions): Promise<RecordUsageResponse>;
  setRecipientConsent(request: SetRecipientConsentRequest, options: CallOptions): Promise<SetRecipientConsentResponse>;
  sendNotification(request: SendNotificationRequest, options: CallOptions): Promise<SendNotificationResponse>;
  listConversationMessages(
    request: ListConversationMessagesRequest,
    options: CallOptions,
  ): Promise<ListConversationMessagesResponse>;
  startActivation(request: StartActivationRequest, options: CallOptions): Promise<StartActivationResponse>;
  getActivation(request: GetActivationRequest, options: CallOptions): Promise<GetActivationResponse>;
  reportCapabilityCheck(
    request: ReportCapabilityCheckRequest,
    options: CallOptions,
  ): Promise<ReportCapabilityCheckResponse>;
  getCapabilities(request: GetCapabilitiesRequest, options: CallOptions): Promise<GetCapabilitiesResponse>;
  close(): void;
}

export function createNotifyClient(address: string, timeoutMs: number): NotifyClient {
  const client = new TenantServiceClient(address, credentials.createInsecure(), {
    ...GRPC_CHANNEL_OPTIONS,
    "grpc.keepalive_time_ms": 30_000,
    "grpc.keepalive_timeout_ms": 10_000,
  });
  // Same channel options, so both clients share one HTTP/2 connection to notify.
  const notifications = new NotificationServiceClient(address, credentials.createInsecure(), {
    ...GRPC_CHANNEL_OPTIONS,
    "grpc.keepalive_time_ms": 30_000,
    "grpc.keepalive_timeout_ms": 10_000,
  });
  const activation = new ActivationServiceClient(address, credentials.createInsecure(), {
    ...GRPC_CHANNEL_OPTIONS,
    "grpc.keepalive_time_ms": 30_000,
    "grpc.keepalive_timeout_ms": 10_000,
  });
  const usage = new UsageServiceClient(address, credentials.createInsecure(), {
    ...GRPC_CHANNEL_OPTIONS,
    "grpc.keepalive_time_ms": 30_000,
    "grpc.keepalive_timeout_ms": 10_000,
  });
  const options = (requestId: string) => ({ requestId, timeoutMs });
  return {
    createTenant: (request, { requestId }) =>
      callUnary(client, TenantServiceService.createTenant, request, options(requestId)),
    getTenant: (request, { requestId }) =>
      callUnary(client, TenantServiceService.getTenant, request, options(requestId)),
    activateTenant: (request, { requestId }) =>
      callUnary(client, TenantServiceService.activateTenant, request, options(requestId)),
    setChannelState: (request, { requestId }) =>
      callUnary(client, TenantServiceService.setChannelState, request, options(requestId)),
    setUsageLimits: (request, { requestId }) =>
      callUnary(client, TenantServiceService.setUsageLimits, request, options(requestId)),
    getUsageLimits: (request, { requestId }) =>
      callUnary(client, TenantServiceService.getUsageLimits, request, options(requestId)),
    getUsage: (request, { requestId }) => callUnary(usage, UsageServiceService.getUsage, request, options(requestId)),
    recordUsage: (request, { requestId }) =>
      callUnary(usage, UsageServiceService.recordUsage, request, options(requestId)),
    setRecipientConsent: (request, { requestId }) =>
      callUnary(client, TenantServiceService.setRecipientConsent, request, options(requestId)),
    sendNotification: (request, { requestId }) =>
      callUnary(notifications, NotificationServiceService.sendNotification, request, options(requestId)),
    listConversationMessages: (request, { requestId }) =>
      callUnary(notifications, NotificationServiceService.listConversationMessages, request, options(requestId)),
    startActivation: (request, { requestId }) =>
      callUnary(activation, ActivationServiceService.startActivation, request, options(requestId)),
    getActivation: (request, { requestId }) =>
      callUnary(activation, ActivationServiceService.getActivation, request, options(requestId)),
    reportCapabilityCheck: (request, { requestId }) =>
      callUnary(activation, ActivationServiceService.reportCapabilityCheck, request, options(requestId)),
    getCapabilities: (request, { requestId }) =>
      callUnary(activation, ActivationServiceService.getCapabilities, request, options(requestId)),
    close: () => {
      client.close();
      notifications.close();
      activation.close();
      usage.close();
    },
  };
}

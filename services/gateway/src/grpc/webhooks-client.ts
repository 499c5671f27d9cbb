import { credentials } from "@grpc/grpc-js";
import {
  WebhookServiceClient,
  WebhookServiceService,
  type CreateEndpointRequest,
  type CreateEndpointResponse,
  type DeleteEndpointRequest,
  type DeleteEndpointResponse,
  type GetDeliveryRequest,
  type GetDeliveryResponse,
  type GetEndpointRequest,
  type GetEndpointResponse,
  type GetEndpointStatsRequest,
  type GetEndpointStatsResponse,
  type ListDeliveriesRequest,
  type ListDeliveriesResponse,
  type ListEndpointsRequest,
  type ListEndpointsResponse,
  type ListEventTypesRequest,
  type ListEventTypesResponse,
  type PauseEndpointRequest,
  type PauseEndpointResponse,
  type RedriveDeliveryRequest,
  type RedriveDeliveryResponse,
  type ResumeEndpointRequest,
  type ResumeEndpointResponse,
  type RotateSecretRequest,
  type RotateSecretResponse,
  type SendTestDeliveryRequest,
  type SendTestDeliveryResponse,
  type UpdateEndpointRequest,
  type UpdateEndpointResponse,
} from "@platform/proto/webhooks/v1";
import { callUnary } from "@platform/service-kit/grpc-client";
import { GRPC_CHANNEL_OPTIONS } from "@platform/service-kit/grpc-server";
import type { CallOptions } from "./catalog-client.js";

/** The gateway's view of webhooks.v1.WebhookService. */
export interface WebhooksClient {
  createEndpoint(request: CreateEndpointRequest, options: CallOptions): Promise<CreateEndpointResponse>;
  getEndpoint(request: GetEndpointRequest, options: CallOptions): Promise<GetEndpointResponse>;
  listEndpoints(request: ListEndpointsRequest, options: CallOptions): Promise<ListEndpointsResponse>;
  updateEndpoint(request: UpdateEndpointRequest, options: CallOptions): Promise<UpdateEndpointResponse>;
  deleteEndpoint(request: DeleteEndpointRequest, options: CallOptions): Promise<DeleteEndpointResponse>;
  pauseEndpoint(request: PauseEndpointRequest, options: CallOptions): Promise<PauseEndpointResponse>;
  resumeEndpoint(request: ResumeEndpointRequest, options: CallOptions): Promise<ResumeEndpointResponse>;
  rotateSecret(request: RotateSecretRequest, options: CallOptions): Promise<RotateSecretResponse>;
  listEventTypes(request: ListEventTypesRequest, options: CallOptions): Promise<ListEventTypesResponse>;
  listDeliveries(request: ListDeliveriesRequest, options: CallOptions): Promise<ListDeliveriesResponse>;
  getDelivery(request: GetDeliveryRequest, options: CallOptions): Promise<GetDeliveryResponse>;
  redriveDelivery(request: RedriveDeliveryRequest, options: CallOptions): Promise<RedriveDeliveryResponse>;
  getEndpointStats(request: GetEndpointStatsRequest, options: CallOptions): Promise<GetEndpointStatsResponse>;
  sendTestDelivery(request: SendTestDeliveryRequest, options: CallOptions): Promise<SendTestDeliveryResponse>;
  close(): void;
}

export function createWebhooksClient(address: string, timeoutMs: number): WebhooksClient {
  const client = new WebhookServiceClient(address, credentials.createInsecure(), {
    ...GRPC_CHANNEL_OPTIONS,
    "grpc.keepalive_time_ms": 30_000,
    "grpc.keepalive_timeout_ms": 10_000,
  });
  const options = (requestId: string) => ({ requestId, timeoutMs });
  const s = WebhookServiceService;
  return {
    createEndpoint: (request, { requestId }) => callUnary(client, s.createEndpoint, request, options(requestId)),
    getEndpoint: (request, { requestId }) => callUnary(client, s.getEndpoint, request, options(requestId)),
    listEndpoints: (request, { requestId }) => callUnary(client, s.listEndpoints, request, options(requestId)),
    updateEndpoint: (request, { requestId }) => callUnary(client, s.updateEndpoint, request, options(requestId)),
    deleteEndpoint: (request, { requestId }) => callUnary(client, s.deleteEndpoint, request, options(requestId)),
    pauseEndpoint: (request, { requestId }) => callUnary(client, s.pauseEndpoint, request, options(requestId)),
    resumeEndpoint: (request, { requestId }) => callUnary(client, s.resumeEndpoint, request, options(requestId)),
    rotateSecret: (request, { requestId }) => callUnary(client, s.rotateSecret, request, options(requestId)),
    listEventTypes: (request, { requestId }) => callUnary(client, s.listEventTypes, request, options(requestId)),
    listDeliveries: (request, { requestId }) => callUnary(client, s.listDeliveries, request, options(requestId)),
    getDelivery: (request, { requestId }) => callUnary(client, s.getDelivery, request, options(requestId)),
    redriveDelivery: (request, { requestId }) => callUnary(client, s.redriveDelivery, request, options(requestId)),
    getEndpointStats: (request, { requestId }) => callUnary(client, s.getEndpointStats, request, options(requestId)),
    sendTestDelivery: (request, { requestId }) => callUnary(client, s.sendTestDelivery, request, options(requestId)),
    close: () => client.close(),
  };
}

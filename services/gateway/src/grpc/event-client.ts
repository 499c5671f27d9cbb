import { credentials } from "@grpc/grpc-js";
import {
  EventServiceClient,
  EventServiceService,
  type PublishEventRequest,
  type PublishEventResponse,
} from "@platform/proto/webhooks/v1";
import { callUnary } from "@platform/service-kit/grpc-client";
import { GRPC_CHANNEL_OPTIONS } from "@platform/service-kit/grpc-server";
import type { CallOptions } from "./catalog-client.js";

/** The internal event contract (webhooks.v1.EventService), as the admin CLI uses it. */
export interface EventClient {
  publishEvent(request: PublishEventRequest, options: CallOptions): Promise<PublishEventResponse>;
  close(): void;
}

export function createEventClient(address: string, timeoutMs: number): EventClient {
  const client = new EventServiceClient(address, credentials.createInsecure(), GRPC_CHANNEL_OPTIONS);
  return {
    publishEvent: (request, { requestId }) =>
      callUnary(client, EventServiceService.publishEvent, request, { requestId, timeoutMs }),
    close: () => client.close(),
  };
}

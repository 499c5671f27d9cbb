import { EventServiceService } from "@platform/proto/webhooks/v1";
import { createClient, type ServiceClient } from "@platform/service-kit/grpc-client";
import { GRPC_CHANNEL_OPTIONS } from "@platform/service-kit/grpc-server";

/** The internal event contract (webhooks.v1.EventService), as the admin CLI uses it. */
export type EventClient = ServiceClient<typeof EventServiceService>;

export function createEventClient(address: string, timeoutMs: number): EventClient {
  // A CLI client that makes one call and exits: no keepalive pings (as before).
  return createClient(EventServiceService, address, { timeoutMs, channelOptions: GRPC_CHANNEL_OPTIONS });
}

import type { ChannelInterface } from "@grpc/grpc-js";
import { ProjectionServiceService } from "@platform/proto/notify/v1/projections";
import { createClient, type ServiceClient } from "@platform/service-kit/grpc-client";

/**
 * The gateway's (and admin CLI's) view of notify.v1.ProjectionService: the poll reads, and
 * rebuildProjections for operators (admin `projection rebuild`, with its own `timeoutMs`).
 */
export type ProjectionClient = ServiceClient<typeof ProjectionServiceService>;

export function createProjectionClient(
  channelOrAddress: ChannelInterface | string,
  timeoutMs: number,
): ProjectionClient {
  return createClient(ProjectionServiceService, channelOrAddress, { timeoutMs });
}

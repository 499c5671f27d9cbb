import { credentials } from "@grpc/grpc-js";
import {
  ProjectionServiceClient,
  ProjectionServiceService,
  type ListActivityRequest,
  type ListActivityResponse,
  type ListAttentionRequest,
  type ListAttentionResponse,
  type ListWorkRequest,
  type ListWorkResponse,
  type RebuildProjectionsRequest,
  type RebuildProjectionsResponse,
} from "@platform/proto/notify/v1/projections";
import { callUnary } from "@platform/service-kit/grpc-client";
import { GRPC_CHANNEL_OPTIONS } from "@platform/service-kit/grpc-server";
import type { CallOptions } from "./catalog-client.js";

/** The gateway's (and admin CLI's) view of notify.v1.ProjectionService: the poll reads. */
export interface ProjectionClient {
  listWork(request: ListWorkRequest, options: CallOptions): Promise<ListWorkResponse>;
  listAttention(request: ListAttentionRequest, options: CallOptions): Promise<ListAttentionResponse>;
  listActivity(request: ListActivityRequest, options: CallOptions): Promise<ListActivityResponse>;
  /** Operators only (admin `projection rebuild`); `timeoutMs` overrides the usual deadline. */
  rebuildProjections(
    request: RebuildProjectionsRequest,
    options: CallOptions & { timeoutMs?: number },
  ): Promise<RebuildProjectionsResponse>;
  close(): void;
}

export function createProjectionClient(address: string, timeoutMs: number): ProjectionClient {
  // The notify clients' channel options: one HTTP/2 connection to notify for all of them.
  const client = new ProjectionServiceClient(address, credentials.createInsecure(), {
    ...GRPC_CHANNEL_OPTIONS,
    "grpc.keepalive_time_ms": 30_000,
    "grpc.keepalive_timeout_ms": 10_000,
  });
  const options = (requestId: string) => ({ requestId, timeoutMs });
  return {
    listWork: (request, { requestId }) =>
      callUnary(client, ProjectionServiceService.listWork, request, options(requestId)),
    listAttention: (request, { requestId }) =>
      callUnary(client, ProjectionServiceService.listAttention, request, options(requestId)),
    listActivity: (request, { requestId }) =>
      callUnary(client, ProjectionServiceService.listActivity, request, options(requestId)),
    rebuildProjections: (request, { requestId, timeoutMs: rebuildTimeoutMs }) =>
      callUnary(client, ProjectionServiceService.rebuildProjections, request, {
        requestId,
        timeoutMs: rebuildTimeoutMs ?? timeoutMs,
      }),
    close: () => client.close(),
  };
}

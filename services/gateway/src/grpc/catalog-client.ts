import type { ChannelInterface } from "@grpc/grpc-js";
import { CatalogServiceService } from "@platform/proto/catalog/v1";
import { createClient, type ServiceClient } from "@platform/service-kit/grpc-client";

/** The gateway's view of catalog.v1.CatalogService: promises with a deadline and the request id. */
export type CatalogClient = ServiceClient<typeof CatalogServiceService>;

export function createCatalogClient(channelOrAddress: ChannelInterface | string, timeoutMs: number): CatalogClient {
  return createClient(CatalogServiceService, channelOrAddress, { timeoutMs });
}

import { credentials } from "@grpc/grpc-js";
import {
  CatalogServiceClient,
  CatalogServiceService,
  type CreatePetRequest,
  type CreatePetResponse,
  type GetPetRequest,
  type GetPetResponse,
  type ListPetsRequest,
  type ListPetsResponse,
} from "@platform/proto/catalog/v1";
import { callUnary } from "@platform/service-kit/grpc-client";
import { GRPC_CHANNEL_OPTIONS } from "@platform/service-kit/grpc-server";

export interface CallOptions {
  requestId: string;
}

/** The gateway's view of catalog.v1.CatalogService: promises with a deadline and the request id. */
export interface CatalogClient {
  listPets(request: ListPetsRequest, options: CallOptions): Promise<ListPetsResponse>;
  createPet(request: CreatePetRequest, options: CallOptions): Promise<CreatePetResponse>;
  getPet(request: GetPetRequest, options: CallOptions): Promise<GetPetResponse>;
  close(): void;
}

export function createCatalogClient(address: string, timeoutMs: number): CatalogClient {
  const client = new CatalogServiceClient(address, credentials.createInsecure(), {
    ...GRPC_CHANNEL_OPTIONS,
    "grpc.keepalive_time_ms": 30_000,
    "grpc.keepalive_timeout_ms": 10_000,
  });
  return {
    listPets: (request, { requestId }) =>
      callUnary(client, CatalogServiceService.listPets, request, { requestId, timeoutMs }),
    createPet: (request, { requestId }) =>
      callUnary(client, CatalogServiceService.createPet, request, { requestId, timeoutMs }),
    getPet: (request, { requestId }) =>
      callUnary(client, CatalogServiceService.getPet, request, { requestId, timeoutMs }),
    close: () => client.close(),
  };
}

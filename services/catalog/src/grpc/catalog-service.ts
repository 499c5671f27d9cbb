import { CatalogServiceService, PetStatus as ProtoPetStatus, type Pet as ProtoPet } from "@platform/proto/catalog/v1";
import type { UnaryHandlers } from "@platform/service-kit/grpc-server";
import { InvalidPetError, validateNewPet, type Pet, type PetStatus } from "../domain/pet.js";
import { decodePageToken, resolvePageSize, toPage } from "../domain/pet-page.js";
import type { PetRepository } from "../db/pet-repository.js";

const toProtoStatus: Record<PetStatus, ProtoPetStatus> = {
  available: ProtoPetStatus.PET_STATUS_AVAILABLE,
  pending: ProtoPetStatus.PET_STATUS_PENDING,
  sold: ProtoPetStatus.PET_STATUS_SOLD,
};

/** UNSPECIFIED -> undefined ("not given"); an unknown number is a bad argument. */
function fromProtoStatus(status: ProtoPetStatus): PetStatus | undefined {
  switch (status) {
    case ProtoPetStatus.PET_STATUS_UNSPECIFIED:
      return undefined;
    case ProtoPetStatus.PET_STATUS_AVAILABLE:
      return "available";
    case ProtoPetStatus.PET_STATUS_PENDING:
      return "pending";
    case ProtoPetStatus.PET_STATUS_SOLD:
      return "sold";
    default:
      throw new InvalidPetError("status must be one of available, pending, sold");
  }
}

function toProtoPet(pet: Pet): ProtoPet {
  return { id: pet.id, name: pet.name, categoryId: pet.categoryId, status: toProtoStatus[pet.status] };
}

/** catalog.v1.CatalogService: maps proto messages to the domain and back; no rules of its own. */
export function createCatalogService(deps: { pets: PetRepository }): UnaryHandlers<typeof CatalogServiceService> {
  return {
    async listPets(request) {
      const status = fromProtoStatus(request.status);
      const query = {
        limit: resolvePageSize(request.pageSize),
        status,
        afterId: request.pageToken ? decodePageToken(request.pageToken, status) : undefined,
      };
      const page = toPage(await deps.pets.listPageWithLookahead(query), query);
      return { pets: page.pets.map(toProtoPet), nextPageToken: page.nextPageToken ?? "" };
    },
    async createPet(request, { logger }) {
      const newPet = validateNewPet({
        name: request.name,
        categoryId: request.categoryId,
        status: fromProtoStatus(request.status),
      });
      const pet = await deps.pets.create(newPet);
      logger.info({ petId: pet.id }, "pet created");
      return { pet: toProtoPet(pet) };
    },
    async getPet(request) {
      return { pet: toProtoPet(await deps.pets.get(request.id)) };
    },
  };
}

import {
  CatalogServiceService,
  CreatePetRequest,
  PetStatus as ProtoPetStatus,
  type Pet as ProtoPet,
} from "@platform/proto/catalog/v1";
import type { UnaryHandlers } from "@platform/service-kit/grpc-server";
import { fingerprintOf, runIdempotently, type IdempotencyOptions } from "@platform/service-kit/idempotency";
import type { Knex } from "@platform/service-kit/postgres";
import { InvalidPetError, validateIdempotencyKey, validateNewPet, type Pet, type PetStatus } from "../domain/pet.js";
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
export function createCatalogService(deps: {
  db: Knex;
  pets: PetRepository;
  idempotency: IdempotencyOptions;
}): UnaryHandlers<typeof CatalogServiceService> {
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
      const idempotency = validateIdempotencyKey(request.idempotencyKey, request.idempotencyScope);
      if (!idempotency) {
        const pet = await deps.pets.create(newPet);
        logger.info({ petId: pet.id }, "pet created");
        return { pet: toProtoPet(pet), replayed: false };
      }
      // The key is recorded in the same transaction as the pet: a repeat replays, never inserts.
      const fingerprint = fingerprintOf(
        "catalog.v1.CatalogService/CreatePet",
        CreatePetRequest.encode({ ...request, idempotencyKey: "", idempotencyScope: "" }).finish(),
      );
      const outcome = await runIdempotently<Pet>(
        deps.db,
        { scope: idempotency.scope, key: idempotency.key, fingerprint },
        (trx) => deps.pets.create(newPet, trx),
        deps.idempotency,
      );
      if (outcome.replayed) logger.info({ petId: outcome.result.id }, "pet creation replayed");
      else logger.info({ petId: outcome.result.id }, "pet created");
      return { pet: toProtoPet(outcome.result), replayed: outcome.replayed };
    },
    async getPet(request) {
      return { pet: toProtoPet(await deps.pets.get(request.id)) };
    },
  };
}

import { PetStatus as ProtoPetStatus, type Pet as ProtoPet } from "@platform/proto/catalog/v1";
import { ApiError } from "../../http/api-error.js";

/** A pet's status as partners write it, and as the catalog service stores it. */
export const statusToProto = {
  available: ProtoPetStatus.PET_STATUS_AVAILABLE,
  pending: ProtoPetStatus.PET_STATUS_PENDING,
  sold: ProtoPetStatus.PET_STATUS_SOLD,
} as const;
export type PetStatus = keyof typeof statusToProto;
export const petStatuses = Object.keys(statusToProto) as PetStatus[];

const statusFromProto: Partial<Record<ProtoPetStatus, PetStatus>> = {
  [ProtoPetStatus.PET_STATUS_AVAILABLE]: "available",
  [ProtoPetStatus.PET_STATUS_PENDING]: "pending",
  [ProtoPetStatus.PET_STATUS_SOLD]: "sold",
};

export function isPetStatus(value: unknown): value is PetStatus {
  return typeof value === "string" && Object.hasOwn(statusToProto, value);
}

export function petToJson(pet: ProtoPet | undefined): Record<string, unknown> {
  if (!pet) throw new ApiError(500, "catalog answered without a pet");
  // ids are int64 strings on the wire; partners get JSON integers (exact below 2^53).
  return {
    id: Number(pet.id),
    name: pet.name,
    categoryId: Number(pet.categoryId),
    status: statusFromProto[pet.status],
  };
}

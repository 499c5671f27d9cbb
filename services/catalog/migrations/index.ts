import type { Migration } from "@platform/service-kit/postgres";
import * as createPets from "./20261122000000_create_pets.js";
import * as createIdempotencyKeys from "./20261201000000_create_idempotency_keys.js";

/** Every migration of the catalog schema, oldest first. Add new files here. */
export const migrations: Migration[] = [createPets, createIdempotencyKeys];

import type { Migration } from "@platform/service-kit/postgres";
import * as createPets from "./20261122000000_create_pets.js";

/** Every migration of the catalog schema, oldest first. Add new files here. */
export const migrations: Migration[] = [createPets];

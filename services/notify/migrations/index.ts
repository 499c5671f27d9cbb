import type { Migration } from "@platform/service-kit/postgres";
import * as createTenants from "./20261122000000_create_tenants.js";

/** Every migration of the notify schema, oldest first. Add new files here. */
export const migrations: Migration[] = [createTenants];

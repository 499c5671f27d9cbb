import type { Migration } from "@platform/service-kit/postgres";
import * as createApiKeys from "./20261122000000_create_api_keys.js";

/** Every migration of the gateway schema, oldest first. Add new files here. */
export const migrations: Migration[] = [createApiKeys];

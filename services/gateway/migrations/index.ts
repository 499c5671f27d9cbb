import type { Migration } from "@platform/service-kit/postgres";
import * as createApiKeys from "./20261122000000_create_api_keys.js";
import * as createFleetMembers from "./20261124000000_create_fleet_members.js";
import * as createConsole from "./20261125000000_create_console.js";

/** Every migration of the gateway schema, oldest first. Add new files here. */
export const migrations: Migration[] = [createApiKeys, createFleetMembers, createConsole];

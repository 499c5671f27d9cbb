/**
 * `node dist/src/migrate.js`: brings the gateway schema to the latest migration and exits.
 * Kubernetes runs it as a pre-install/pre-upgrade hook Job before the new pods start.
 */
import { runMigrateEntryPoint } from "@platform/service-kit/migrate-command";
import { migrations } from "../migrations/index.js";
import { GATEWAY_SCHEMA, loadGatewayConfig } from "./config.js";

await runMigrateEntryPoint({ service: "gateway", schema: GATEWAY_SCHEMA, migrations, loadConfig: loadGatewayConfig });

/**
 * `node dist/src/migrate.js`: brings the catalog schema to the latest migration and exits.
 * Kubernetes runs it as a pre-install/pre-upgrade hook Job before the new pods start.
 */
import { runMigrateEntryPoint } from "@platform/service-kit/migrate-command";
import { migrations } from "../migrations/index.js";
import { CATALOG_SCHEMA, loadCatalogConfig } from "./config.js";

await runMigrateEntryPoint({ service: "catalog", schema: CATALOG_SCHEMA, migrations, loadConfig: loadCatalogConfig });

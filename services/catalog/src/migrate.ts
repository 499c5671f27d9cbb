/**
 * `node dist/src/migrate.js`: brings the catalog schema to the latest migration and exits.
 * Kubernetes runs it as a pre-install/pre-upgrade hook Job before the new pods start.
 */
import { createLogger } from "@platform/service-kit/logger";
import { runMigrations } from "@platform/service-kit/migrate-command";
import { failStartup } from "@platform/service-kit/shutdown";
import { migrations } from "../migrations/index.js";
import { CATALOG_SCHEMA, loadCatalogConfig } from "./config.js";

const logger = createLogger("catalog-migrate", "info");

try {
  const config = loadCatalogConfig(process.env);
  await runMigrations({ databaseUrl: config.DATABASE_URL, schema: CATALOG_SCHEMA, migrations, logger });
} catch (error) {
  failStartup(logger, error);
}

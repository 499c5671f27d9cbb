/**
 * `node dist/src/migrate.js`: brings the catalog schema to the latest migration and exits.
 * Kubernetes runs it as a pre-install/pre-upgrade hook Job before the new pods start.
 */
import { createLogger } from "@platform/service-kit/logger";
import { createDatabase, migrateToLatest, waitForDatabase } from "@platform/service-kit/postgres";
import { failStartup } from "@platform/service-kit/shutdown";
import { migrations } from "../migrations/index.js";
import { CATALOG_SCHEMA, loadCatalogConfig } from "./config.js";

const logger = createLogger("catalog-migrate", "info");

async function migrate() {
  const config = loadCatalogConfig(process.env);
  const db = createDatabase({ url: config.DATABASE_URL, schema: CATALOG_SCHEMA, poolMax: 1 });
  try {
    await waitForDatabase(db, 30_000);
    const applied = await migrateToLatest(db, CATALOG_SCHEMA, migrations);
    logger.info({ applied }, applied.length > 0 ? "migrations applied" : "schema already up to date");
  } finally {
    await db.destroy();
  }
}

migrate().catch((error: unknown) => failStartup(logger, error));

/**
 * `node dist/src/migrate.js`: brings the gateway schema to the latest migration and exits.
 * Kubernetes runs it as a pre-install/pre-upgrade hook Job before the new pods start.
 */
import { createLogger } from "@platform/service-kit/logger";
import { createDatabase, migrateToLatest, waitForDatabase } from "@platform/service-kit/postgres";
import { failStartup } from "@platform/service-kit/shutdown";
import { migrations } from "../migrations/index.js";
import { GATEWAY_SCHEMA, loadGatewayConfig } from "./config.js";

const logger = createLogger("gateway-migrate", "info");

async function migrate() {
  const config = loadGatewayConfig(process.env);
  const db = createDatabase({ url: config.DATABASE_URL, schema: GATEWAY_SCHEMA, poolMax: 1 });
  try {
    await waitForDatabase(db, 30_000);
    const applied = await migrateToLatest(db, GATEWAY_SCHEMA, migrations);
    logger.info({ applied }, applied.length > 0 ? "migrations applied" : "schema already up to date");
  } finally {
    await db.destroy();
  }
}

migrate().catch((error: unknown) => failStartup(logger, error));

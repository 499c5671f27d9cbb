/**
 * `node dist/src/migrate.js`: brings the notify schema to the latest migration and exits.
 * Kubernetes runs it as a pre-install/pre-upgrade hook Job before the new pods start.
 */
import { createLogger } from "@platform/service-kit/logger";
import { runMigrations } from "@platform/service-kit/migrate-command";
import { failStartup } from "@platform/service-kit/shutdown";
import { migrations } from "../migrations/index.js";
import { loadNotifyConfig, NOTIFY_SCHEMA } from "./config.js";

const logger = createLogger("notify-migrate", "info");

try {
  const config = loadNotifyConfig(process.env);
  await runMigrations({ databaseUrl: config.DATABASE_URL, schema: NOTIFY_SCHEMA, migrations, logger });
} catch (error) {
  failStartup(logger, error);
}

/**
 * `node dist/src/migrate.js`: brings the webhooks schema to the latest migration and exits.
 * Kubernetes runs it as a pre-install/pre-upgrade hook Job before the new pods start.
 */
import { createLogger } from "@platform/service-kit/logger";
import { runMigrations } from "@platform/service-kit/migrate-command";
import { failStartup } from "@platform/service-kit/shutdown";
import { migrations } from "../migrations/index.js";
import { loadWebhooksConfig, WEBHOOKS_SCHEMA } from "./config.js";

const logger = createLogger("webhooks-migrate", "info");

try {
  const config = loadWebhooksConfig(process.env);
  await runMigrations({ databaseUrl: config.DATABASE_URL, schema: WEBHOOKS_SCHEMA, migrations, logger });
} catch (error) {
  failStartup(logger, error);
}

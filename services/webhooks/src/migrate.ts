/**
 * `node dist/src/migrate.js`: brings the webhooks schema to the latest migration and exits.
 * Kubernetes runs it as a pre-install/pre-upgrade hook Job before the new pods start.
 */
import { runMigrateEntryPoint } from "@platform/service-kit/migrate-command";
import { migrations } from "../migrations/index.js";
import { loadWebhooksConfig, WEBHOOKS_SCHEMA } from "./config.js";

await runMigrateEntryPoint({
  service: "webhooks",
  schema: WEBHOOKS_SCHEMA,
  migrations,
  loadConfig: loadWebhooksConfig,
});

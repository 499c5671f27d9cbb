/**
 * `node dist/src/migrate.js`: brings the notify schema to the latest migration and exits.
 * Kubernetes runs it as a pre-install/pre-upgrade hook Job before the new pods start.
 */
import { runMigrateEntryPoint } from "@platform/service-kit/migrate-command";
import { migrations } from "../migrations/index.js";
import { loadNotifyConfig, NOTIFY_SCHEMA } from "./config.js";

await runMigrateEntryPoint({ service: "notify", schema: NOTIFY_SCHEMA, migrations, loadConfig: loadNotifyConfig });

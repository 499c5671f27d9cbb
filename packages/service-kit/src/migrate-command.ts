import type { Logger } from "pino";
import type { Environment } from "./config.js";
import { createLogger } from "./logger.js";
import { createDatabase, migrateToLatest, waitForDatabase, type Migration } from "./postgres.js";
import { failStartup } from "./shutdown.js";

/**
 * The body of every service's `migrate` entry point (a Helm hook Job in Kubernetes): waits for
 * Postgres, brings the service's schema to the latest migration, logs what it applied.
 */
export async function runMigrations(options: {
  databaseUrl: string;
  schema: string;
  migrations: Migration[];
  logger: Logger;
}): Promise<string[]> {
  const db = createDatabase({ url: options.databaseUrl, schema: options.schema, poolMax: 1, logger: options.logger });
  try {
    await waitForDatabase(db, 30_000);
    const applied = await migrateToLatest(db, options.schema, options.migrations);
    options.logger.info({ applied }, applied.length > 0 ? "migrations applied" : "schema already up to date");
    return applied;
  } finally {
    await db.destroy();
  }
}

/**
 * A service's whole `migrate.ts` (`node dist/src/migrate.js`): reads the service's configuration
 * from the environment and runs its migrations, logging as `<service>-migrate`. The process
 * exits 0 once the schema is current; a bad setting or a failed migration is logged as fatal
 * and exits 1.
 */
export async function runMigrateEntryPoint(options: {
  /** The service's name, as in its `main.ts` logger: "catalog", "notify", ... */
  service: string;
  schema: string;
  migrations: Migration[];
  loadConfig: (environment: Environment) => { DATABASE_URL: string };
}): Promise<void> {
  const logger = createLogger(`${options.service}-migrate`, "info");
  try {
    const config = options.loadConfig(process.env);
    await runMigrations({
      databaseUrl: config.DATABASE_URL,
      schema: options.schema,
      migrations: options.migrations,
      logger,
    });
  } catch (error) {
    failStartup(logger, error);
  }
}

import type { Logger } from "pino";
import { createDatabase, migrateToLatest, waitForDatabase, type Migration } from "./postgres.js";

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

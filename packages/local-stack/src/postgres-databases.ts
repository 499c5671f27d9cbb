import { randomBytes } from "node:crypto";
import pg from "pg";

/** The URL with its database name replaced. */
export function withDatabase(url: string, database: string): string {
  const parsed = new URL(url);
  parsed.pathname = `/${database}`;
  return parsed.toString();
}

/** Creates `database` on the server behind `serverUrl` unless it exists already. */
export async function ensureDatabase(serverUrl: string, database: string): Promise<string> {
  const client = new pg.Client({ connectionString: withDatabase(serverUrl, "postgres") });
  await client.connect();
  try {
    const exists = await client.query("select 1 from pg_database where datname = $1", [database]);
    if (exists.rowCount === 0) {
      await client.query(`create database "${database.replaceAll('"', '""')}"`).catch((error: unknown) => {
        if ((error as { code?: string }).code !== "42P04") throw error; // created concurrently
      });
    }
  } finally {
    await client.end();
  }
  return withDatabase(serverUrl, database);
}

export interface ScratchDatabase {
  url: string;
  name: string;
  drop(): Promise<void>;
}

/**
 * A fresh database of its own for one test file or one benchmark run, so runs never collide.
 * The server is `serverUrl`, else TEST_DATABASE_URL's (default: the local Postgres).
 */
export async function createScratchDatabase(prefix = "t", server?: string): Promise<ScratchDatabase> {
  const serverUrl = server ?? process.env.TEST_DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/postgres";
  const name = `${prefix}_${Date.now().toString(36)}_${randomBytes(4).toString("hex")}`;
  const url = await ensureDatabase(serverUrl, name);
  return {
    url,
    name,
    async drop() {
      const client = new pg.Client({ connectionString: withDatabase(serverUrl, "postgres") });
      await client.connect();
      try {
        // Connections just closed (a pool's end() sends Terminate without waiting for the server)
        // may still be there: give them up to half a second to go, so `force` does not terminate a client
        // that is ending, whose FATAL answer would then be an error nobody listens for.
        for (let waited = 0; waited < 500; waited += 25) {
          const open = await client.query<{ n: number }>(
            "select count(*)::int as n from pg_stat_activity where datname = $1 and pid <> pg_backend_pid()",
            [name],
          );
          if (open.rows[0]!.n === 0) break;
          await new Promise((resolve) => setTimeout(resolve, 25));
        }
        await client.query(`drop database if exists "${name}" with (force)`);
      } finally {
        await client.end();
      }
    },
  };
}

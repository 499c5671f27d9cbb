/**
 * The operators' CLI: `npm run -s admin -- <command>` from the repository root.
 * Prints one JSON document on stdout; errors go to stderr with a non-zero exit.
 *
 *   key create [--tenants ID[,ID...]] [--scopes S[,S...]] [--name N]   -> {"id","key",...}
 *   key revoke --id KEYID                                              -> {"id","revoked":true}
 *
 * It talks to the gateway's schema at DATABASE_URL; when that is unset it uses the database of
 * the local stack that `npm start` recorded in .data/stack.env, else the local default.
 */
import { readFileSync } from "node:fs";
import { parseArgs } from "node:util";
import { createDatabase, migrateToLatest, waitForDatabase, type Knex } from "@platform/service-kit/postgres";
import { migrations } from "../../migrations/index.js";
import { GATEWAY_SCHEMA, loadGatewayConfig } from "../config.js";
import { createApiKeyStore } from "../db/api-key-store.js";
import { isScope, issueApiKey, scopes, type Scope } from "../domain/api-key.js";

class UsageError extends Error {
  override name = "UsageError";
}

function list(value: string | undefined): string[] {
  return (value ?? "")
    .split(",")
    .map((item) => item.trim())
    .filter((item) => item.length > 0);
}

type Command = (args: string[], db: Knex) => Promise<unknown>;

const commands: Record<string, Command> = {
  "key create": async (args, db) => {
    const { values } = parseArgs({
      args,
      options: { tenants: { type: "string" }, scopes: { type: "string" }, name: { type: "string" } },
      strict: true,
    });
    const requested = list(values.scopes);
    const unknown = requested.filter((scope) => !isScope(scope));
    if (unknown.length > 0) {
      throw new UsageError(`unknown scope ${unknown.join(", ")}; known scopes: ${scopes.join(", ")}`);
    }
    const tenantIds = list(values.tenants);
    const issued = issueApiKey();
    const details = { name: values.name ?? "unnamed", scopes: requested as Scope[], tenantIds };
    await createApiKeyStore(db).insert(issued, details);
    return { id: issued.id, key: issued.key, name: details.name, scopes: details.scopes, tenants: tenantIds };
  },
  "key revoke": async (args, db) => {
    const { values } = parseArgs({ args, options: { id: { type: "string" } }, strict: true });
    if (!values.id) throw new UsageError("key revoke needs --id KEYID");
    if (!(await createApiKeyStore(db).revoke(values.id))) throw new UsageError(`no key ${values.id}`);
    return { id: values.id, revoked: true };
  },
};

function stackEnvironment(): Record<string, string> {
  try {
    const text = readFileSync(".data/stack.env", "utf8");
    return Object.fromEntries(
      text
        .split("\n")
        .map((line) => /^([A-Z_]+)=(.*)$/.exec(line.trim()))
        .filter((m): m is RegExpExecArray => m !== null)
        .map((m) => [m[1]!, m[2]!]),
    );
  } catch {
    return {};
  }
}

async function run(argv: string[]): Promise<unknown> {
  const name = argv.slice(0, 2).join(" ");
  const command = commands[name];
  if (!command) throw new UsageError(`usage: admin <${Object.keys(commands).join(" | ")}> [options]`);
  const config = loadGatewayConfig({ ...stackEnvironment(), ...process.env });
  const db = createDatabase({ url: config.DATABASE_URL, schema: GATEWAY_SCHEMA, poolMax: 2 });
  try {
    await waitForDatabase(db, 10_000);
    await migrateToLatest(db, GATEWAY_SCHEMA, migrations);
    return await command(argv.slice(2), db);
  } finally {
    await db.destroy();
  }
}

run(process.argv.slice(2)).then(
  (result) => {
    process.stdout.write(`${JSON.stringify(result)}\n`);
  },
  (error: unknown) => {
    const message = error instanceof Error ? error.message : String(error);
    process.stderr.write(`${JSON.stringify({ error: message })}\n`);
    process.exitCode =
      error instanceof UsageError || (error as { code?: string }).code?.startsWith("ERR_PARSE_ARGS") ? 2 : 1;
  },
);

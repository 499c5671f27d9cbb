/**
 * The operators' CLI: `npm run -s admin -- <command>` from the repository root.
 * Prints one JSON document on stdout; errors go to stderr with a non-zero exit.
 *
 *   key create [--tenants ID[,ID...]] [--scopes S[,S...]] [--name N]   -> {"id","key",...}
 *   key revoke --id KEYID                                              -> {"id","revoked":true}
 *   tenant create --name NAME [--id ID] [--plan testing|commercial]    -> the tenant record
 *   tenant activate --id ID                                            -> the tenant record
 *   tenant channel --id ID --state ready|not_ready                     -> the tenant record
 *   tenant opt-out --id ID --to PHONE                                  -> {"tenantId","recipient","optedOut":true}
 *   tenant opt-in --id ID --to PHONE                                   -> {"tenantId","recipient","optedOut":false}
 *
 * Key commands use the gateway's schema at DATABASE_URL; tenant commands call the notify service
 * at NOTIFY_ADDR over gRPC. Unset variables come from the local stack's .data/stack.env (written
 * by `npm start`), else the local defaults.
 */
import { randomUUID } from "node:crypto";
import { readFileSync } from "node:fs";
import { parseArgs } from "node:util";
import { ChannelState, TenantPlan } from "@platform/proto/notify/v1";
import { createDatabase, migrateToLatest, waitForDatabase, type Knex } from "@platform/service-kit/postgres";
import { migrations } from "../../migrations/index.js";
import { GATEWAY_SCHEMA, loadGatewayConfig, type GatewayConfig } from "../config.js";
import { createApiKeyStore } from "../db/api-key-store.js";
import { isScope, issueApiKey, scopes, type Scope } from "../domain/api-key.js";
import { apiErrorFromGrpc } from "../http/api-error.js";
import { tenantToJson } from "../http/tenant-routes.js";
import { createNotifyClient, type NotifyClient } from "../grpc/notify-client.js";

class UsageError extends Error {
  override name = "UsageError";
}

function list(value: string | undefined): string[] {
  return (value ?? "")
    .split(",")
    .map((item) => item.trim())
    .filter((item) => item.length > 0);
}

/** What a command may use; each is opened on first use and closed at exit. */
interface Resources {
  db(): Promise<Knex>;
  notify(): NotifyClient;
}

type Command = (args: string[], resources: Resources) => Promise<unknown>;

/** Calls notify; a refusal becomes a UsageError carrying notify's message. */
async function tenantCall<T extends { tenant?: Parameters<typeof tenantToJson>[0] }>(call: Promise<T>) {
  try {
    return tenantToJson((await call).tenant);
  } catch (error) {
    const apiError = apiErrorFromGrpc(error);
    if (apiError.status < 500) throw new UsageError(apiError.message);
    throw new Error(`notify is unavailable: ${(error as Error).message}`);
  }
}

const plans: Record<string, TenantPlan> = {
  testing: TenantPlan.TENANT_PLAN_TESTING,
  commercial: TenantPlan.TENANT_PLAN_COMMERCIAL,
};
const channelStates: Record<string, ChannelState> = {
  ready: ChannelState.CHANNEL_STATE_READY,
  not_ready: ChannelState.CHANNEL_STATE_NOT_READY,
};
const cliCall = () => ({ requestId: `admin_${randomUUID()}` });

const commands: Record<string, Command> = {
  "key create": async (args, resources) => {
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
    await createApiKeyStore(await resources.db()).insert(issued, details);
    return { id: issued.id, key: issued.key, name: details.name, scopes: details.scopes, tenants: tenantIds };
  },
  "key revoke": async (args, resources) => {
    const { values } = parseArgs({ args, options: { id: { type: "string" } }, strict: true });
    if (!values.id) throw new UsageError("key revoke needs --id KEYID");
    if (!(await createApiKeyStore(await resources.db()).revoke(values.id))) {
      throw new UsageError(`no key ${values.id}`);
    }
    return { id: values.id, revoked: true };
  },
  "tenant create": async (args, resources) => {
    const { values } = parseArgs({
      args,
      options: { name: { type: "string" }, id: { type: "string" }, plan: { type: "string" } },
      strict: true,
    });
    if (!values.name) throw new UsageError("tenant create needs --name NAME");
    const plan = values.plan === undefined ? TenantPlan.TENANT_PLAN_TESTING : plans[values.plan];
    if (plan === undefined) throw new UsageError("--plan must be testing or commercial");
    return tenantCall(resources.notify().createTenant({ id: values.id ?? "", name: values.name, plan }, cliCall()));
  },
  "tenant activate": async (args, resources) => {
    const { values } = parseArgs({ args, options: { id: { type: "string" } }, strict: true });
    if (!values.id) throw new UsageError("tenant activate needs --id ID");
    return tenantCall(resources.notify().activateTenant({ tenantId: values.id }, cliCall()));
  },
  "tenant channel": async (args, resources) => {
    const { values } = parseArgs({
      args,
      options: { id: { type: "string" }, state: { type: "string" } },
      strict: true,
    });
    const state = channelStates[values.state ?? ""];
    if (!values.id || state === undefined) throw new UsageError("tenant channel needs --id ID --state ready|not_ready");
    return tenantCall(resources.notify().setChannelState({ tenantId: values.id, state }, cliCall()));
  },
  "tenant opt-out": (args, resources) => setConsent("opt-out", args, resources),
  "tenant opt-in": (args, resources) => setConsent("opt-in", args, resources),
};

/** A recipient opts out of (or back into) a tenant's messages; notify validates the number. */
async function setConsent(which: "opt-out" | "opt-in", args: string[], resources: Resources) {
  const { values } = parseArgs({ args, options: { id: { type: "string" }, to: { type: "string" } }, strict: true });
  if (!values.id || !values.to) throw new UsageError(`tenant ${which} needs --id ID --to PHONE`);
  try {
    return await resources
      .notify()
      .setRecipientConsent({ tenantId: values.id, to: values.to, optedOut: which === "opt-out" }, cliCall());
  } catch (error) {
    const apiError = apiErrorFromGrpc(error);
    if (apiError.status < 500) throw new UsageError(apiError.message);
    throw new Error(`notify is unavailable: ${(error as Error).message}`);
  }
}

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
  const opened = openResources(config);
  try {
    return await command(argv.slice(2), opened.resources);
  } finally {
    await opened.close();
  }
}

function openResources(config: GatewayConfig): { resources: Resources; close(): Promise<void> } {
  let db: Promise<Knex> | undefined;
  let notify: NotifyClient | undefined;
  return {
    resources: {
      db: () =>
        (db ??= (async () => {
          const knex = createDatabase({ url: config.DATABASE_URL, schema: GATEWAY_SCHEMA, poolMax: 2 });
          await waitForDatabase(knex, 10_000);
          await migrateToLatest(knex, GATEWAY_SCHEMA, migrations);
          return knex;
        })()),
      notify: () => (notify ??= createNotifyClient(config.NOTIFY_ADDR, config.UPSTREAM_TIMEOUT)),
    },
    async close() {
      notify?.close();
      await (await db?.catch(() => undefined))?.destroy();
    },
  };
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

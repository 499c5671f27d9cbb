/**
 * The operators' CLI: `npm run -s admin -- <command>` from the repository root.
 * Prints one JSON document on stdout; errors go to stderr as {"error"} with exit 2 (refused) or
 * 1 (infrastructure), warnings as {"warning"} lines on stderr. `--help` / `-h`, alone or after a
 * command, prints usage on stdout and exits 0.
 *
 * Key and console user commands (`user create|invite|disable|list`, docs/console.md) use the
 * gateway's schema at DATABASE_URL; tenant commands (and the tenant checks of
 * `key create --tenants` and `event emit`) call the notify service at NOTIFY_ADDR over gRPC;
 * `event emit` publishes through the internal event contract of the webhooks service at
 * WEBHOOKS_ADDR; `usage record` enters token usage through notify's UsageService. Unset variables come from the local stack's .data/stack.env (written by
 * `npm start`), else the local defaults.
 */
import { randomUUID } from "node:crypto";
import { readFileSync, realpathSync } from "node:fs";
import { pathToFileURL } from "node:url";
import { parseArgs } from "node:util";
import { ChannelState, TenantPlan } from "@platform/proto/notify/v1";
import { status as GrpcStatus } from "@grpc/grpc-js";
import {
  createDatabase,
  isTransientDatabaseError,
  migrateToLatest,
  waitForDatabase,
  type Knex,
} from "@platform/service-kit/postgres";
import { inSpan, SpanKind, startTracing, traceIdOf, traceparentOf } from "@platform/service-kit/tracing";
import { migrations } from "../../migrations/index.js";
import { GATEWAY_SCHEMA, loadGatewayConfig, type GatewayConfig } from "../config.js";
import { createApiKeyStore } from "../db/api-key-store.js";
import {
  CONSOLE_USER_ID_PATTERN,
  ConsoleUserExistsError,
  createConsoleStore,
  inviteConsoleUser,
  type ConsoleUser,
} from "../db/console-store.js";
import { consoleEmailOf, consoleRoles, isConsoleRole } from "../domain/console-role.js";
import { digestConsoleToken, issueConsoleToken } from "../domain/console-token.js";
import { isScope, issueApiKey, scopes, type Scope } from "../domain/api-key.js";
import { apiErrorFromGrpc } from "../http/api-error.js";
import { capabilityToJson, manifestToJson, tenantToJson, usageToJson } from "../routes/representations.js";
import { createEventClient, type EventClient } from "../grpc/event-client.js";
import { createNotifyClient, type NotifyClient } from "../grpc/notify-client.js";
import { createProjectionClient, type ProjectionClient } from "../grpc/projection-client.js";
import { StackDownError, UsageError } from "./errors.js";

/** host:port/database of a Postgres URL: never the password. */
function databaseAddress(url: string): string {
  try {
    const parsed = new URL(url);
    return `${parsed.hostname}:${parsed.port || "5432"}${parsed.pathname}`;
  } catch {
    return "DATABASE_URL";
  }
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
  config: GatewayConfig;
  notify(): NotifyClient;
  /** Where notify was looked for (for messages). */
  notifyAddress: string;
  events(): EventClient;
  eventsAddress: string;
  projections(): ProjectionClient;
  /** A warning on stderr; the command still succeeds. */
  warn(message: string): void;
  /** The options of every gRPC call: a new request id, and the command's trace context when traced. */
  call(): { requestId: string; traceparent?: string | undefined };
  /** The command's trace id when tracing is on (OTEL_EXPORTER_OTLP_ENDPOINT). */
  traceId: string | undefined;
}

interface Command {
  /** The options, after the command's two words. */
  usage: string;
  does: string;
  run(args: string[], resources: Resources): Promise<unknown>;
}

/**
 * Calls a service. tenant.not_found becomes "no such tenant: ID"; other refusals keep the
 * service's message (exit 2); an unreachable service says the stack seems down.
 */
async function reachService<T>(service: string, address: string, tenantId: string, call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (error) {
    const grpcCode = (error as { code?: unknown }).code;
    if (grpcCode === GrpcStatus.UNAVAILABLE || grpcCode === GrpcStatus.DEADLINE_EXCEEDED) {
      throw new StackDownError(service, address, error);
    }
    const apiError = apiErrorFromGrpc(error);
    if (apiError.options.code === "tenant.not_found") throw new UsageError(`no such tenant: ${tenantId}`);
    if (apiError.options.code === "tenant.version_mismatch") {
      // A stale expectedVersion is a failed version precondition, as HTTP's 412 says it.
      throw new UsageError(`${apiError.options.code} (412): ${apiError.message}`);
    }
    if (apiError.status < 500) throw new UsageError(apiError.message);
    throw new Error(`${service} failed: ${(error as Error).message}`);
  }
}

/** A call to notify about one tenant (empty when none). */
const reachNotify = <T>(resources: Resources, tenantId: string, call: () => Promise<T>): Promise<T> =>
  reachService("notify", resources.notifyAddress, tenantId, call);

/** A call to notify answering a tenant: the tenant as the API shows it. */
async function tenantFromNotify(
  resources: Resources,
  tenantId: string,
  call: () => Promise<{ tenant?: Parameters<typeof tenantToJson>[0] }>,
) {
  return tenantToJson((await reachNotify(resources, tenantId, call)).tenant);
}

/** Every tenant must exist in notify; names all that do not. */
async function requireTenants(resources: Resources, tenantIds: string[]): Promise<void> {
  const missing: string[] = [];
  for (const tenantId of tenantIds) {
    try {
      await reachNotify(resources, tenantId, () => resources.notify().getTenant({ tenantId }, resources.call()));
    } catch (error) {
      if (error instanceof UsageError && error.message.startsWith("no such tenant")) missing.push(tenantId);
      else throw error;
    }
  }
  if (missing.length > 0) throw new UsageError(`no such tenant: ${missing.join(", ")}`);
}

const plans: Record<string, TenantPlan> = {
  testing: TenantPlan.TENANT_PLAN_TESTING,
  commercial: TenantPlan.TENANT_PLAN_COMMERCIAL,
};
const channelStates: Record<string, ChannelState> = {
  ready: ChannelState.CHANNEL_STATE_READY,
  not_ready: ChannelState.CHANNEL_STATE_NOT_READY,
};

const commands: Record<string, Command> = {
  "key create": {
    usage: "[--tenants ID[,ID...]] [--scopes S[,S...]] [--name N]",
    does: `issues an API key (printed only here) granted these tenants and scopes (${scopes.join(", ")})`,
    async run(args, resources) {
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
      await requireTenants(resources, tenantIds);
      if (tenantIds.length > 0 && requested.length === 0) {
        resources.warn(
          "the key is granted tenants but no scopes: it can use the catalog but no tenant operation; add --scopes",
        );
      }
      const issued = issueApiKey();
      const details = { name: values.name ?? "unnamed", scopes: requested as Scope[], tenantIds };
      await createApiKeyStore(await resources.db()).insert(issued, details);
      return { id: issued.id, key: issued.key, name: details.name, scopes: details.scopes, tenants: tenantIds };
    },
  },
  "key revoke": {
    usage: "--id KEYID",
    does: "revokes a key; every gateway refuses it at once",
    async run(args, resources) {
      const { values } = parseArgs({ args, options: { id: { type: "string" } }, strict: true });
      if (!values.id) throw new UsageError("key revoke needs --id KEYID");
      if (!(await createApiKeyStore(await resources.db()).revoke(values.id))) {
        throw new UsageError(`no key ${values.id}`);
      }
      return { id: values.id, revoked: true };
    },
  },
  "tenant create": {
    usage: "--name NAME [--id ID] [--plan testing|commercial]",
    does: "creates a tenant in notify (not activated; plan testing by default)",
    async run(args, resources) {
      const { values } = parseArgs({
        args,
        options: { name: { type: "string" }, id: { type: "string" }, plan: { type: "string" } },
        strict: true,
      });
      if (!values.name) throw new UsageError("tenant create needs --name NAME");
      const plan = values.plan === undefined ? TenantPlan.TENANT_PLAN_TESTING : plans[values.plan];
      if (plan === undefined) throw new UsageError("--plan must be testing or commercial");
      const request = { id: values.id ?? "", name: values.name, plan };
      return tenantFromNotify(resources, request.id, () => resources.notify().createTenant(request, resources.call()));
    },
  },
  "tenant get": {
    usage: "--id ID",
    does: "prints the tenant record (plan, version, and on testing the month's allowance)",
    async run(args, resources) {
      const { values } = parseArgs({ args, options: { id: { type: "string" } }, strict: true });
      if (!values.id) throw new UsageError("tenant get needs --id ID");
      const tenantId = values.id;
      return tenantFromNotify(resources, tenantId, () => resources.notify().getTenant({ tenantId }, resources.call()));
    },
  },
  "tenant plan": {
    usage:
      "--id ID --plan commercial|testing --reason agreement_signed|card_saved|agreement_ended|card_removed|operator_correction [--expected-version N]",
    does: "moves the tenant to another plan at once (same plan again: unchanged, nothing recorded); prints the tenant and `changed`",
    async run(args, resources) {
      const { values } = parseArgs({
        args,
        options: {
          id: { type: "string" },
          plan: { type: "string" },
          reason: { type: "string" },
          "expected-version": { type: "string" },
        },
        strict: true,
      });
      const plan = plans[values.plan ?? ""];
      if (!values.id || plan === undefined || !values.reason) {
        throw new UsageError("tenant plan needs --id ID --plan commercial|testing --reason REASON");
      }
      const expected = values["expected-version"];
      if (expected !== undefined && !/^[1-9][0-9]{0,15}$/.test(expected)) {
        throw new UsageError("--expected-version must be a positive integer");
      }
      const tenantId = values.id;
      const answer = await reachNotify(resources, tenantId, () =>
        resources
          .notify()
          .changePlan(
            { tenantId, plan, reason: values.reason!, expectedVersion: expected, actor: "admin:cli" },
            resources.call(),
          ),
      );
      return { ...tenantToJson(answer.tenant), changed: answer.changed };
    },
  },
  "tenant activate": {
    usage: "--id ID",
    does: "activation passes and the channel is ready",
    async run(args, resources) {
      const { values } = parseArgs({ args, options: { id: { type: "string" } }, strict: true });
      if (!values.id) throw new UsageError("tenant activate needs --id ID");
      const tenantId = values.id;
      return tenantFromNotify(resources, tenantId, () =>
        resources.notify().activateTenant({ tenantId }, resources.call()),
      );
    },
  },
  "tenant channel": {
    usage: "--id ID --state ready|not_ready",
    does: "sets the tenant's channel readiness",
    async run(args, resources) {
      const { values } = parseArgs({
        args,
        options: { id: { type: "string" }, state: { type: "string" } },
        strict: true,
      });
      const state = channelStates[values.state ?? ""];
      if (!values.id || state === undefined) {
        throw new UsageError("tenant channel needs --id ID --state ready|not_ready");
      }
      const tenantId = values.id;
      return tenantFromNotify(resources, tenantId, () =>
        resources.notify().setChannelState({ tenantId, state }, resources.call()),
      );
    },
  },
  "capability report": {
    usage: "--tenant ID --capability NAME --result pass|fail [--reason CODE]",
    does:
      "records a capability check result, as the platform's checks would (a fail needs --reason, a capability " +
      "reason code of the code catalogue); prints the capability, the activation manifest and the events emitted",
    async run(args, resources) {
      const { values } = parseArgs({
        args,
        options: {
          tenant: { type: "string" },
          capability: { type: "string" },
          result: { type: "string" },
          reason: { type: "string" },
        },
        strict: true,
      });
      if (!values.tenant || !values.capability || (values.result !== "pass" && values.result !== "fail")) {
        throw new UsageError(
          "capability report needs --tenant ID --capability NAME --result pass|fail [--reason CODE]",
        );
      }
      const tenantId = values.tenant;
      const request = {
        tenantId,
        capability: values.capability,
        passed: values.result === "pass",
        reasonCode: values.reason ?? "",
      };
      const response = await reachNotify(resources, tenantId, () =>
        resources.notify().reportCapabilityCheck(request, resources.call()),
      );
      return {
        capability: response.capability ? capabilityToJson(response.capability) : null,
        activation: manifestToJson(response.manifest),
        emittedEvents: response.emittedEventTypes,
      };
    },
  },
  "tenant opt-out": {
    usage: "--id ID --to PHONE",
    does: "records that the recipient opted out of the tenant's messages (sends to it answer 409)",
    run: (args, resources) => setConsent("opt-out", args, resources),
  },
  "tenant opt-in": {
    usage: "--id ID --to PHONE",
    does: "withdraws the recipient's opt-out",
    run: (args, resources) => setConsent("opt-in", args, resources),
  },
  "event emit": {
    usage: "--tenant ID --type TYPE --data JSON [--id EVENT_ID]",
    does:
      "publishes a platform event (conversation.started, booking.created, booking.cancelled, escalation.raised, " +
      "escalation.resolved) through the internal event contract, as the platform would; prints its id (and its traceId when OTEL_EXPORTER_OTLP_ENDPOINT is set). --data is " +
      "the snapshot: a JSON object of the type's fields only, ids, states, RFC 3339 times and catalogue reason " +
      "codes, never text (docs/webhooks.md lists them; e.g. booking.created needs booking_id). capability.* come " +
      "from `capability report`, tenant.* from activation, usage.* from metering: they cannot be emitted. " +
      "--id makes a republish of the same occurrence a no-op",
    async run(args, resources) {
      const { values } = parseArgs({
        args,
        options: {
          tenant: { type: "string" },
          type: { type: "string" },
          data: { type: "string" },
          id: { type: "string" },
        },
        strict: true,
      });
      if (!values.tenant || !values.type || values.data === undefined) {
        throw new UsageError("event emit needs --tenant ID --type TYPE --data JSON");
      }
      let data: unknown;
      try {
        data = JSON.parse(values.data);
      } catch (error) {
        throw new UsageError(`--data is not valid JSON: ${(error as Error).message}`);
      }
      if (typeof data !== "object" || data === null || Array.isArray(data)) {
        throw new UsageError("--data must be a JSON object (the snapshot of the affected object)");
      }
      const tenantId = values.tenant;
      await requireTenants(resources, [tenantId]);
      const request = { tenantId, type: values.type, dataJson: values.data, eventId: values.id ?? "", occurredAt: "" };
      const published = await reachService("webhooks", resources.eventsAddress, tenantId, () =>
        resources.events().publishEvent(request, resources.call()),
      );
      return {
        id: published.eventId,
        tenant: tenantId,
        type: values.type,
        duplicate: published.duplicate,
        ...(resources.traceId ? { traceId: resources.traceId } : {}),
      };
    },
  },
  "usage record": {
    usage: "--tenant ID --tokens N [--record-id ID]",
    does:
      "records N tokens (1 to 2^53-1) of usage for the tenant in the current UTC month, as the platform's " +
      "metering would; a cap reached emits usage.threshold_crossed (once per cap and month). --record-id " +
      "makes a repeat count once. Prints the month's usage",
    async run(args, resources) {
      const { values } = parseArgs({
        args,
        options: { tenant: { type: "string" }, tokens: { type: "string" }, "record-id": { type: "string" } },
        strict: true,
      });
      if (!values.tenant || values.tokens === undefined) {
        throw new UsageError("usage record needs --tenant ID --tokens N");
      }
      const tokens = /^[0-9]{1,16}$/.test(values.tokens) ? Number(values.tokens) : Number.NaN;
      if (!Number.isSafeInteger(tokens) || tokens < 1) {
        throw new UsageError("--tokens must be a whole number from 1 to 9007199254740991");
      }
      const tenantId = values.tenant;
      const request = { tenantId, tokens: String(tokens), recordId: values["record-id"] ?? "" };
      const answer = await reachNotify(resources, tenantId, () =>
        resources.notify().recordUsage(request, resources.call()),
      );
      return { ...usageToJson(answer.usage), replayed: answer.replayed };
    },
  },
  "user create": {
    usage: "--tenant ID --email E --role owner|admin|viewer",
    does:
      "creates a console user of the tenant and prints a one-time invitation URL to set a password " +
      "(valid CONSOLE_INVITATION_TTL, 7 days by default; under CONSOLE_BASE_URL, else the gateway's local URL)",
    async run(args, resources) {
      const { values } = parseArgs({
        args,
        options: { tenant: { type: "string" }, email: { type: "string" }, role: { type: "string" } },
        strict: true,
      });
      if (!values.tenant || !values.email || !values.role) {
        throw new UsageError("user create needs --tenant ID --email E --role owner|admin|viewer");
      }
      if (!isConsoleRole(values.role)) throw new UsageError(`--role must be one of ${consoleRoles.join(", ")}`);
      const email = consoleEmailOf(values.email);
      if (!email) throw new UsageError(`--email ${values.email} is not an email address`);
      await requireTenants(resources, [values.tenant]);
      const store = createConsoleStore(await resources.db());
      try {
        const { user, token } = await inviteConsoleUser(store, {
          tenantId: values.tenant,
          email,
          role: values.role,
          invitationTtlMs: resources.config.CONSOLE_INVITATION_TTL,
        });
        return {
          ...userToJson(user),
          invitationUrl: invitationUrl(resources.config, token),
          invitationExpiresAt: user.invitationExpiresAt.toISOString(),
        };
      } catch (error) {
        if (error instanceof ConsoleUserExistsError) throw new UsageError(error.message);
        throw error;
      }
    },
  },
  "user invite": {
    usage: "--id USER_ID",
    does:
      "prints a new one-time invitation URL for an existing user (a forgotten password); the previous one stops " +
      "working, the password stays valid until the new one is set",
    async run(args, resources) {
      const { values } = parseArgs({ args, options: { id: { type: "string" } }, strict: true });
      if (!values.id) throw new UsageError("user invite needs --id USER_ID");
      const store = createConsoleStore(await resources.db());
      const user = CONSOLE_USER_ID_PATTERN.test(values.id) ? await store.findUser(values.id) : undefined;
      if (!user) throw new UsageError(`no console user ${values.id}`);
      if (user.disabledAt) throw new UsageError(`console user ${values.id} is disabled`);
      const token = issueConsoleToken();
      const expiresAt = await store.reinvite(
        user.userId,
        digestConsoleToken(token),
        resources.config.CONSOLE_INVITATION_TTL,
      );
      return {
        ...userToJson(user),
        invitationUrl: invitationUrl(resources.config, token),
        invitationExpiresAt: expiresAt!.toISOString(),
      };
    },
  },
  "user disable": {
    usage: "--id USER_ID",
    does: "disables a console user: every session of theirs ends at once and they can no longer sign in",
    async run(args, resources) {
      const { values } = parseArgs({ args, options: { id: { type: "string" } }, strict: true });
      if (!values.id) throw new UsageError("user disable needs --id USER_ID");
      const store = createConsoleStore(await resources.db());
      const disabled = CONSOLE_USER_ID_PATTERN.test(values.id) ? await store.disableUser(values.id) : undefined;
      if (!disabled) throw new UsageError(`no console user ${values.id}`);
      return { ...userToJson(disabled.user), sessionsEnded: disabled.sessionsEnded };
    },
  },
  "user list": {
    usage: "--tenant ID",
    does: "lists the tenant's console users",
    async run(args, resources) {
      const { values } = parseArgs({ args, options: { tenant: { type: "string" } }, strict: true });
      if (!values.tenant) throw new UsageError("user list needs --tenant ID");
      const users = await createConsoleStore(await resources.db()).listUsers(values.tenant);
      return { users: users.map(userToJson) };
    },
  },
  "projection rebuild": {
    usage: "",
    does:
      "empties notify's poll projections (work, attention, activity) and replays the EVENTS stream into them, " +
      "under a lock the live projector waits on; prints the events applied and the stream sequence read up to",
    async run(args, resources) {
      parseArgs({ args, options: {}, strict: true });
      const result = await reachNotify(resources, "", () =>
        resources.projections().rebuildProjections({}, { ...resources.call(), timeoutMs: REBUILD_TIMEOUT_MS }),
      );
      return { eventsApplied: Number(result.eventsApplied), lastSequence: Number(result.lastSequence) };
    },
  },
};

function userToJson(user: ConsoleUser) {
  return {
    id: user.userId,
    tenant: user.tenantId,
    email: user.email,
    role: user.role,
    createdAt: user.createdAt.toISOString(),
    disabledAt: user.disabledAt?.toISOString() ?? null,
    passwordSet: user.hasPassword,
  };
}

/** CONSOLE_BASE_URL, else the gateway's local URL (its HOST and PORT). */
function invitationUrl(config: GatewayConfig, token: string): string {
  const base = config.CONSOLE_BASE_URL ?? `http://${config.HOST}:${config.PORT}`;
  return `${base}/console/invitation/${token}`;
}

/** A rebuild replays the whole stream (30 days): far longer than an ordinary call may take. */
const REBUILD_TIMEOUT_MS = 30 * 60_000;

/** A recipient opts out of (or back into) a tenant's messages; notify validates the number. */
async function setConsent(which: "opt-out" | "opt-in", args: string[], resources: Resources) {
  const { values } = parseArgs({ args, options: { id: { type: "string" }, to: { type: "string" } }, strict: true });
  if (!values.id || !values.to) throw new UsageError(`tenant ${which} needs --id ID --to PHONE`);
  const request = { tenantId: values.id, to: values.to, optedOut: which === "opt-out" };
  return reachNotify(resources, request.tenantId, () =>
    resources.notify().setRecipientConsent(request, resources.call()),
  );
}

function commandUsage(name: string): string {
  const command = commands[name]!;
  return `usage: admin ${name} ${command.usage}\n  ${command.does}\n`;
}

const topLevelUsage = () =>
  [
    "usage: admin <command> [options]   (npm run -s admin -- <command> [options])",
    "",
    "commands:",
    ...Object.entries(commands).map(([name, command]) => `  ${name} ${command.usage}\n      ${command.does}`),
    "",
    "Prints one JSON document on stdout; errors go to stderr with exit 2 (refused) or 1 (stack down).",
    "Uses DATABASE_URL, NOTIFY_ADDR and WEBHOOKS_ADDR, else what `npm start` recorded in .data/stack.env.",
    "`admin <command> --help` describes one command.",
    "",
  ].join("\n");

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

/** A successful run: a JSON result, or help text. */
type Outcome = { json: unknown } | { text: string };

async function run(argv: string[], env: NodeJS.ProcessEnv, stderr: (text: string) => void): Promise<Outcome> {
  const name = argv.slice(0, 2).join(" ");
  const command = commands[name];
  const wantsHelp = argv.includes("--help") || argv.includes("-h") || argv[0] === "help";
  if (wantsHelp) return { text: command ? commandUsage(name) : topLevelUsage() };
  if (!command) {
    throw new UsageError(`usage: admin <${Object.keys(commands).join(" | ")}> [options]; admin --help for more`);
  }
  const config = loadGatewayConfig({ ...stackEnvironment(), ...env });
  // With OTEL_EXPORTER_OTLP_ENDPOINT, the command is the root span of its calls' traces.
  const tracing = await startTracing("admin", config);
  try {
    return await inSpan(tracing.tracer, `admin ${name}`, undefined, { kind: SpanKind.CLIENT }, async (span) => {
      const opened = openResources(config, traceparentOf(span), stderr);
      try {
        return { json: await command.run(argv.slice(2), opened.resources) };
      } finally {
        await opened.close();
      }
    });
  } finally {
    await tracing.shutdown();
  }
}

function openResources(
  config: GatewayConfig,
  traceparent: string | undefined,
  stderr: (text: string) => void,
): { resources: Resources; close(): Promise<void> } {
  let db: Promise<Knex> | undefined;
  let notify: NotifyClient | undefined;
  let events: EventClient | undefined;
  let projections: ProjectionClient | undefined;
  return {
    resources: {
      config,
      db: () =>
        (db ??= (async () => {
          const knex = createDatabase({ url: config.DATABASE_URL, schema: GATEWAY_SCHEMA, poolMax: 2 });
          try {
            await waitForDatabase(knex, 5_000);
          } catch (error) {
            await knex.destroy();
            if (isTransientDatabaseError(error)) {
              throw new StackDownError("Postgres", databaseAddress(config.DATABASE_URL), error);
            }
            throw error;
          }
          await migrateToLatest(knex, GATEWAY_SCHEMA, migrations);
          return knex;
        })()),
      notify: () => (notify ??= createNotifyClient(config.NOTIFY_ADDR, config.UPSTREAM_TIMEOUT)),
      notifyAddress: config.NOTIFY_ADDR,
      events: () => (events ??= createEventClient(config.WEBHOOKS_ADDR, config.UPSTREAM_TIMEOUT)),
      eventsAddress: config.WEBHOOKS_ADDR,
      projections: () => (projections ??= createProjectionClient(config.NOTIFY_ADDR, config.UPSTREAM_TIMEOUT)),
      warn: (message) => stderr(`${JSON.stringify({ warning: message })}\n`),
      call: () => ({ requestId: `admin_${randomUUID()}`, traceparent }),
      traceId: traceIdOf(traceparent),
    },
    async close() {
      notify?.close();
      events?.close();
      projections?.close();
      await (await db?.catch(() => undefined))?.destroy();
    },
  };
}

/**
 * One run of the CLI: `argv` without node and the script, `env` for process.env. Writes what the
 * process prints and answers its exit code (0, 2 refused, 1 infrastructure). The tests run most
 * commands through it in-process, and spawn the script for the process's own behaviour.
 */
export async function runAdmin(
  argv: string[],
  env: NodeJS.ProcessEnv,
  io: { stdout: (text: string) => void; stderr: (text: string) => void },
): Promise<number> {
  try {
    const outcome = await run(argv, env, io.stderr);
    io.stdout("text" in outcome ? outcome.text : `${JSON.stringify(outcome.json)}\n`);
    return 0;
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    io.stderr(`${JSON.stringify({ error: message })}\n`);
    return error instanceof UsageError || (error as { code?: string }).code?.startsWith("ERR_PARSE_ARGS") ? 2 : 1;
  }
}

// Run as a script (node dist/src/cli/admin.js), not when imported.
if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(realpathSync(process.argv[1])).href) {
  void runAdmin(process.argv.slice(2), process.env, {
    stdout: (text) => process.stdout.write(text),
    stderr: (text) => process.stderr.write(text),
  }).then((code) => {
    process.exitCode = code;
  });
}

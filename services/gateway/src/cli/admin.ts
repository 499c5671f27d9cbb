/**
 * The operators' CLI: `npm run -s admin -- <command>` from the repository root.
 * Prints one JSON document on stdout; errors go to stderr as {"error"} with exit 2 (refused) or
 * 1 (infrastructure), warnings as {"warning"} lines on stderr. `--help` / `-h`, alone or after a
 * command, prints usage on stdout and exits 0.
 *
 * The commands are the rows of commands/*.ts, read and described by command-table.ts. Key and
 * console user commands (`user create|invite|disable|list`, docs/console.md) use the gateway's
 * schema at DATABASE_URL; tenant commands (and the tenant checks of `key create --tenants` and
 * `event emit`) call the notify service at NOTIFY_ADDR over gRPC; `event emit` publishes through
 * the internal event contract of the webhooks service at WEBHOOKS_ADDR; `usage record` enters token
 * usage through notify's UsageService. Unset variables come from the local stack's .data/stack.env
 * (written by `npm start`), else the local defaults.
 */
import { readFileSync, realpathSync } from "node:fs";
import { pathToFileURL } from "node:url";
import { inSpan, SpanKind, startTracing, traceparentOf } from "@platform/service-kit/tracing";
import { loadGatewayConfig } from "../config.js";
import { asksForHelp, commandHelp, commandList, commandOf, runCommand, type AnyCommandRow } from "./command-table.js";
import { capabilityCommands } from "./commands/capabilities.js";
import { consentCommands } from "./commands/consent.js";
import { eventCommands } from "./commands/events.js";
import { keyCommands } from "./commands/keys.js";
import { projectionCommands } from "./commands/projections.js";
import { tenantCommands } from "./commands/tenants.js";
import { usageCommands } from "./commands/usage.js";
import { userCommands } from "./commands/users.js";
import { UsageError } from "./errors.js";
import { openResources, type Resources } from "./resources.js";

/** The table, in the order --help lists it. */
const commands: readonly AnyCommandRow<Resources>[] = [
  ...keyCommands,
  ...tenantCommands,
  ...capabilityCommands,
  ...consentCommands,
  ...eventCommands,
  ...usageCommands,
  ...userCommands,
  ...projectionCommands,
];

const topLevelUsage = () =>
  [
    "usage: admin <command> [options]   (npm run -s admin -- <command> [options])",
    "",
    "commands:",
    ...commandList(commands),
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
  const command = commandOf(commands, argv);
  if (asksForHelp(argv)) return { text: command ? commandHelp("admin", command.row) : topLevelUsage() };
  if (!command) {
    throw new UsageError(
      `usage: admin <${commands.map((row) => row.name).join(" | ")}> [options]; admin --help for more`,
    );
  }
  const config = loadGatewayConfig({ ...stackEnvironment(), ...env });
  // With OTEL_EXPORTER_OTLP_ENDPOINT, the command is the root span of its calls' traces.
  const tracing = await startTracing("admin", config);
  try {
    const name = command.row.name;
    return await inSpan(tracing.tracer, `admin ${name}`, undefined, { kind: SpanKind.CLIENT }, async (span) => {
      const opened = openResources(config, traceparentOf(span), stderr);
      try {
        return { json: await runCommand(command.row, command.args, opened.resources) };
      } finally {
        await opened.close();
      }
    });
  } finally {
    await tracing.shutdown();
  }
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

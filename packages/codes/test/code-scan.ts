/**
 * A static scan of the platform's sources for code-shaped string literals: a whole literal of the
 * form `area.snake_case` whose area is one of the code areas. Event type names (the webhooks event
 * catalog and the internal types of the event contract) share that shape and are left out.
 */
import { readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { codeCatalogue } from "../src/index.js";

/** The repository root, seen from packages/codes/test (vitest runs the sources, never dist). */
export const repoRoot = fileURLToPath(new URL("../../../", import.meta.url));

/** The areas codes live in: every area the catalogue has, and the ones codes could be invented in. */
export const codeAreas: ReadonlySet<string> = new Set([
  ...Object.keys(codeCatalogue).map((code) => code.slice(0, code.indexOf("."))),
  "account",
  "activation",
  "auth",
  "booking",
  "capability",
  "channel",
  "conversation",
  "escalation",
  "event",
  "idempotency",
  "notification",
  "notify",
  "page",
  "partner",
  "pet",
  "projection",
  "request",
  "service",
  "tenant",
  "usage",
  "webhook",
]);

/** Internal event types of the event contract (docs: /work/briefs/events-contract.md; not in the webhook catalog). */
export const internalEventTypes: readonly string[] = [
  "recipient.opted_out",
  "recipient.opted_in",
  "notification.sent",
  "notification.unknown",
  "webhook.endpoint_dead_lettered",
  "webhook.endpoint_resumed",
  "webhook.endpoint_recovery_started",
  "webhook.endpoint_recovery_finished",
  "webhook.endpoint_created",
  "webhook.endpoint_updated",
  "webhook.endpoint_deleted",
  "webhook.endpoint_paused",
  "webhook.endpoint_secret_rotated",
  "webhook.delivery_redriven",
  "webhook.test_delivery_sent",
];

/** The webhook event catalog's types, read from its source (services/webhooks/src/domain/event-catalog.ts). */
export function catalogEventTypes(root = repoRoot): string[] {
  const text = readFileSync(join(root, "services/webhooks/src/domain/event-catalog.ts"), "utf8");
  return [...text.matchAll(/entry\(\s*"([a-z_]+\.[a-z_]+)"/g)].map((match) => match[1] as string);
}

export function eventTypeNames(root = repoRoot): ReadonlySet<string> {
  return new Set([...catalogEventTypes(root), ...internalEventTypes]);
}

export interface CodeLiteral {
  file: string;
  line: number;
  code: string;
}

/** OpenTelemetry's own attribute names that share a code's shape (the resource's `service.name`). */
const openTelemetryAttributes: ReadonlySet<string> = new Set(["service.name"]);

const literal = /(["'`])([a-z][a-z0-9]*)\.([a-z][a-z0-9_]*)\1/g;

/** The code-shaped literals of one source text (event type names excluded unless also catalogued). */
export function codeLiteralsIn(file: string, text: string, eventTypes: ReadonlySet<string>): CodeLiteral[] {
  const found: CodeLiteral[] = [];
  for (const match of text.matchAll(literal)) {
    const [, , area, rest] = match as unknown as [string, string, string, string];
    if (!codeAreas.has(area)) continue;
    const code = `${area}.${rest}`;
    if (eventTypes.has(code) || openTelemetryAttributes.has(code)) continue;
    const line = text.slice(0, match.index).split("\n").length;
    found.push({ file, line, code });
  }
  return found;
}

/** Every non-test .ts under services/{name}/src and packages/{name}/src. */
export function sourceFiles(root = repoRoot): string[] {
  const files: string[] = [];
  const walk = (dir: string) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) {
        if (entry.name !== "node_modules" && entry.name !== "dist") walk(path);
      } else if (entry.name.endsWith(".ts") && !entry.name.endsWith(".test.ts") && !entry.name.endsWith(".d.ts")) {
        files.push(path);
      }
    }
  };
  for (const top of ["services", "packages"]) {
    for (const entry of readdirSync(join(root, top), { withFileTypes: true })) {
      if (!entry.isDirectory()) continue;
      try {
        walk(join(root, top, entry.name, "src"));
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
      }
    }
  }
  return files;
}

/** Every code-shaped literal of the platform's sources. */
export function scanSources(root = repoRoot): CodeLiteral[] {
  const eventTypes = eventTypeNames(root);
  return sourceFiles(root).flatMap((file) =>
    codeLiteralsIn(relative(root, file), readFileSync(file, "utf8"), eventTypes),
  );
}

/** Where a source sets a partner-visible code by a key name, and the use that key means. */
const keyedUse = [
  { key: /\b(?:lastErrorCode|last_error_code)\b/, use: "lastErrorCode" },
  { key: /\b(?:reasonCode|reason_code|resolution_code|resolutionCode)\b/, use: "reasonCode" },
  { key: /\b(?:blockingReasonCode|blocking_reason_code)\b/, use: "blockingReason" },
] as const;

export interface KeyedCode extends CodeLiteral {
  use: (typeof keyedUse)[number]["use"];
}

/** Literals assigned to a key that makes them a lastErrorCode, reason code or blocking reason. */
export function keyedCodesIn(file: string, text: string): KeyedCode[] {
  const found: KeyedCode[] = [];
  for (const { key, use } of keyedUse) {
    const pattern = new RegExp(
      `${key.source}\\s*(?:\\?\\?=|[:=])\\s*(["'\`])([a-z][a-z0-9]*\\.[a-z][a-z0-9_]*)\\1`,
      "g",
    );
    for (const match of text.matchAll(pattern)) {
      const line = text.slice(0, match.index).split("\n").length;
      found.push({ file, line, code: match[2] as string, use });
    }
  }
  return found;
}

export function scanKeyedCodes(root = repoRoot): KeyedCode[] {
  return sourceFiles(root).flatMap((file) => keyedCodesIn(relative(root, file), readFileSync(file, "utf8")));
}

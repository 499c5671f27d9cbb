/**
 * The catalogue as markdown: the OpenAPI document's `Errors` tag and docs/errors.md are both
 * rendered from here, so neither can list a code the catalogue does not hold or miss one it does.
 */
import type { CodeEntry, CodeUse } from "./code-entry.js";
import { codeCatalogue } from "./index.js";
import { statusReactions } from "./statuses.js";

const cell = (text: string) => text.replace(/\|/g, "\\|").replace(/\n/g, " ");

const entries = () => Object.entries(codeCatalogue) as [string, CodeEntry][];

/** Spec 7.2's table: status, meaning, client reaction. */
export function statusTable(): string {
  return [
    "| Status | Meaning | Client reaction |",
    "|---|---|---|",
    ...statusReactions.map(({ status, meaning, reaction }) => `| ${status} | ${cell(meaning)} | ${cell(reaction)} |`),
  ].join("\n");
}

/** Every problem code: code, status, meaning, client reaction; by status, then code. */
export function problemCodeTable(): string {
  const rows = entries()
    .filter(([, entry]) => entry.usedAs.includes("problem"))
    .sort(([a, x], [b, y]) => (x.status ?? 0) - (y.status ?? 0) || a.localeCompare(b));
  return [
    "| Code | Status | Meaning | Client reaction |",
    "|---|---|---|---|",
    ...rows.map(
      ([code, entry]) => `| \`${code}\` | ${entry.status} | ${cell(entry.meaning)} | ${cell(entry.reaction)} |`,
    ),
  ].join("\n");
}

/** The codes used as `use` (other than problems): code, meaning, client reaction. */
export function codeTable(use: Exclude<CodeUse, "problem">): string {
  const rows = entries()
    .filter(([, entry]) => entry.usedAs.includes(use))
    .sort(([a], [b]) => a.localeCompare(b));
  if (rows.length === 0) return "_None yet._";
  return [
    "| Code | Meaning | Client reaction |",
    "|---|---|---|",
    ...rows.map(([code, entry]) => `| \`${code}\` | ${cell(entry.meaning)} | ${cell(entry.reaction)} |`),
  ].join("\n");
}

/** The whole catalogue as the body of docs/errors.md (between its generated markers). */
export function catalogueMarkdown(): string {
  return [
    "## Statuses",
    "",
    "Branch on `code`; a client that meets a code it does not know falls back to its status's row.",
    "",
    statusTable(),
    "",
    "## Problem codes",
    "",
    "The `code` of every tenant-interface problem (application/problem+json).",
    "",
    problemCodeTable(),
    "",
    "## lastErrorCode",
    "",
    "The tenant record's `lastErrorCode` (null when there is none).",
    "",
    codeTable("lastErrorCode"),
    "",
    "## Blocking reasons",
    "",
    "`blockingReasons[].code` of a tenant's activation.",
    "",
    codeTable("blockingReason"),
    "",
    "## Reason codes",
    "",
    "`reasonCode` of work, attention and activity items and capability checks, and the `reason_code` / " +
      "`resolution_code` of event snapshots.",
    "",
    codeTable("reasonCode"),
    "",
    "## Internal codes",
    "",
    "Between the platform's services, in operator tools and logs; a partner never receives them (an internal " +
      "code reaching the tenant interface is logged, counted and answered with its status's default code).",
    "",
    codeTable("internal"),
  ].join("\n");
}

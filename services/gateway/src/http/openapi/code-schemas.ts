/**
 * The code catalogue (@platform/codes) in the tenant OpenAPI document: the `Errors` tag's tables
 * (spec 7.2's statuses, every problem code, the reason codes), a `ProblemCode` schema whose enum is
 * every problem code with each one's meaning and reaction in `x-codes`, and one schema per other
 * partner-visible use (`LastErrorCode`, `BlockingReasonCode`, `ReasonCode`) as `oneOf` of `const` +
 * `description`. Internal codes are never in the document.
 */
import { codeCatalogue, type CodeEntry, type CodeUse } from "@platform/codes";
import { codeTable, problemCodeTable, statusTable } from "@platform/codes/markdown";

const entries = () => Object.entries(codeCatalogue) as [string, CodeEntry][];

const usedAs = (use: CodeUse) =>
  entries()
    .filter(([, entry]) => entry.usedAs.includes(use))
    .sort(([a], [b]) => a.localeCompare(b));

export const errorsTag = {
  name: "Errors",
  description: [
    "Every non-success is application/problem+json (RFC 9457). Branch on `status` and `code`; tolerate a body " +
      "that is not problem JSON (fall back to the status) and ignore unknown members. Each operation lists the " +
      "codes it can answer with; `title` is stable per code, `detail` is for people.",
    "",
    "### Statuses",
    "",
    statusTable(),
    "",
    "### Problem codes",
    "",
    problemCodeTable(),
    "",
    "### `lastErrorCode` (the tenant record)",
    "",
    codeTable("lastErrorCode"),
    "",
    "### `blockingReasons[].code` (activation)",
    "",
    codeTable("blockingReason"),
    "",
    "### Reason codes (work, attention and activity items, capability checks, event snapshots)",
    "",
    codeTable("reasonCode"),
  ].join("\n"),
};

/** A string schema holding exactly the codes used as `use`, each documented. */
function codeSchema(use: Exclude<CodeUse, "problem" | "internal">, description: string) {
  const codes = usedAs(use);
  if (codes.length === 0) {
    // No code is used this way yet: nothing is valid (JSON Schema's `oneOf` needs at least one member).
    return { description: `${description} No code is used this way yet.`, not: {} };
  }
  return {
    type: "string",
    description,
    oneOf: codes.map(([code, entry]) => ({
      const: code,
      title: entry.title,
      description: `${entry.meaning} Client reaction: ${entry.reaction}`,
    })),
  };
}

export function codeSchemas() {
  const problems = usedAs("problem");
  return {
    ProblemCode: {
      type: "string",
      description:
        "A problem's `code`: stable, from the one code catalogue. `x-codes` gives each code's status, title, " +
        "meaning and the client's reaction (the `Errors` tag has them as a table).",
      enum: problems.map(([code]) => code),
      "x-codes": Object.fromEntries(
        problems.map(([code, entry]) => [
          code,
          { status: entry.status, title: entry.title, meaning: entry.meaning, reaction: entry.reaction },
        ]),
      ),
    },
    LastErrorCode: codeSchema(
      "lastErrorCode",
      "The tenant record's `lastErrorCode`: a stable partner-safe code of the last failure that affects the tenant.",
    ),
    BlockingReasonCode: codeSchema(
      "blockingReason",
      "`blockingReasons[].code` of a tenant's activation: what keeps it from going live.",
    ),
    ReasonCode: codeSchema(
      "reasonCode",
      "A reason code: why a work, attention or activity item, a capability check or an event snapshot is in its state.",
    ),
  };
}

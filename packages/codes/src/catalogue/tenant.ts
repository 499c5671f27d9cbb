import type { CodeEntries } from "../code-entry.js";

/** Tenants and their account state. */
export const tenantCodes = {
  "tenant.not_found": {
    status: 404,
    title: "Tenant not found",
    meaning: "No tenant with this id is available to this key (unknown, or not granted: the two look the same).",
    reaction: "Verify the tenant id and the key's grants; no blind retry.",
    usedAs: ["problem"],
  },
  "account.tenant_not_activated": {
    status: 409,
    title: "The tenant is not activated",
    meaning: "The tenant has not finished activation, so it cannot send.",
    reaction: "Read GET /activation, resolve its blocking reasons, POST /activation; then send again.",
    usedAs: ["problem"],
  },
  "account.testing_allowance_exhausted": {
    status: 409,
    title: "The testing allowance is used up",
    meaning: "A tenant on the testing plan used its 1000 sends of this UTC month.",
    reaction: "Wait for the next month or move the tenant to the commercial plan; do not retry now.",
    usedAs: ["problem"],
  },
  "account.tenant_unavailable": {
    title: "The tenant is unavailable",
    meaning: "The tenant cannot be served at the moment.",
    reaction: "Read the tenant record and its activation; contact support if it persists.",
    usedAs: ["lastErrorCode"],
  },
  "tenant.invalid": {
    title: "The tenant record is invalid",
    meaning:
      "Operator input (admin `tenant create` and friends): an id, name, plan or state is malformed; the message names it.",
    reaction: "The operator fixes the command's input; the admin CLI exits 2 with the reason.",
    usedAs: ["internal"],
  },
  "tenant.already_exists": {
    title: "The tenant already exists",
    meaning: "Operator input: a tenant with this id was created before.",
    reaction: "The operator picks another id or reads the existing tenant.",
    usedAs: ["internal"],
  },
} as const satisfies CodeEntries;

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
    meaning:
      "A tenant on the testing plan used its sends of this UTC month (NOTIFY_TESTING_ALLOWANCE, default 1000; every send of the month counts, on whichever plan it was made).",
    reaction:
      "Wait for the next month (the tenant record's testingAllowance.resetsAt) or sign a commercial agreement or save a card; after the plan change, retrying with the same Idempotency-Key sends.",
    usedAs: ["problem", "reasonCode"],
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
  "tenant.version_mismatch": {
    status: 412,
    title: "The tenant changed since you read it",
    meaning:
      "`expectedVersion` (PUT /channel, admin `tenant plan --expected-version`, `tenant channel connect --expected-version`) is no longer the tenant record's `version`.",
    reaction: "Read the tenant again (GET the tenant record), decide on its current state and retry with its version.",
    usedAs: ["problem"],
  },
  "tenant.plan_change_invalid": {
    title: "The plan change is invalid",
    meaning:
      "Operator input (admin `tenant plan`): the plan is not testing or commercial, or the reason does not fit the direction of the change.",
    reaction: "The operator fixes the command's input; the admin CLI exits 2 with the reason.",
    usedAs: ["internal"],
  },
  "plan.agreement_signed": {
    title: "A commercial agreement was signed",
    meaning:
      "tenant.plan_changed's reason_code: the tenant moved to the commercial plan because it signed an agreement.",
    reaction: "None: the testing allowance no longer applies.",
    usedAs: ["reasonCode"],
  },
  "plan.card_saved": {
    title: "A card was saved",
    meaning: "tenant.plan_changed's reason_code: the tenant moved to the commercial plan because a card was saved.",
    reaction: "None: the testing allowance no longer applies.",
    usedAs: ["reasonCode"],
  },
  "plan.agreement_ended": {
    title: "The commercial agreement ended",
    meaning: "tenant.plan_changed's reason_code: the tenant moved back to the testing plan.",
    reaction: "Read the tenant record's testingAllowance: this month's sends so far count against it.",
    usedAs: ["reasonCode"],
  },
  "plan.card_removed": {
    title: "The saved card was removed",
    meaning: "tenant.plan_changed's reason_code: the tenant moved back to the testing plan.",
    reaction: "Read the tenant record's testingAllowance: this month's sends so far count against it.",
    usedAs: ["reasonCode"],
  },
  "plan.operator_correction": {
    title: "An operator corrected the plan",
    meaning: "tenant.plan_changed's reason_code: an operator set the plan by hand.",
    reaction: "Read the tenant record for the plan now in force.",
    usedAs: ["reasonCode"],
  },
  "account.testing_allowance_warning": {
    title: "Most of the testing allowance is used",
    meaning:
      "usage.testing_allowance_threshold_crossed's reason_code at 80% of the month's testing sends; at 100% it is account.testing_allowance_exhausted (also an open attention item).",
    reaction: "Sign a commercial agreement or save a card before the allowance runs out.",
    usedAs: ["reasonCode"],
  },
} as const satisfies CodeEntries;

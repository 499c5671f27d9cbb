import type { CodeEntries } from "../code-entry.js";

/** Activation and capability checks. */
export const activationCodes = {
  "capability.credentials_revoked": {
    title: "The capability's credentials were revoked",
    meaning: "The check of a capability found that the credentials it runs on were revoked or expired.",
    reaction: "Reconnect the account behind the capability (new credentials); the next passing check restores it.",
    usedAs: ["reasonCode", "blockingReason", "lastErrorCode"],
  },
  "capability.permission_missing": {
    title: "The capability lacks a permission",
    meaning: "The check of a capability found that a permission it needs was not granted.",
    reaction: "Grant the missing permission in the connected account; the next passing check restores it.",
    usedAs: ["reasonCode", "blockingReason", "lastErrorCode"],
  },
  "capability.unreachable": {
    title: "The capability could not be reached",
    meaning: "The check of a capability could not reach the system it depends on.",
    reaction: "Usually transient: wait for the next check; contact support if it persists.",
    usedAs: ["reasonCode", "blockingReason", "lastErrorCode"],
  },
  "capability.channel_quality_low": {
    title: "The WhatsApp number is flagged for low quality",
    meaning:
      "The check of the messaging channel found the tenant's number FLAGGED or its quality rating RED (the Cloud API's phone-number resource, or a phone_number_quality_update callback).",
    reaction:
      "Improve what customers receive (fewer, expected messages) in WhatsApp Manager; the next check or the provider's UNFLAGGED callback restores it.",
    usedAs: ["reasonCode", "blockingReason", "lastErrorCode"],
  },
  "capability.channel_disconnected": {
    title: "The WhatsApp number is not connected",
    meaning:
      "The check of the messaging channel found the tenant's number in a status other than CONNECTED (disconnected, pending, deleted, migrated), or the account was removed.",
    reaction: "Reconnect or re-register the number in WhatsApp Manager, then connect the channel again (PUT /channel).",
    usedAs: ["reasonCode", "blockingReason", "lastErrorCode"],
  },
  "capability.channel_restricted": {
    title: "The WhatsApp account or number is restricted",
    meaning:
      "The tenant's WhatsApp Business Account or number is banned, restricted or rate limited by the provider (the phone-number resource's status, or an account_update callback).",
    reaction:
      "Resolve the restriction with the provider; a reinstatement callback or the next passing check restores it.",
    usedAs: ["reasonCode", "blockingReason", "lastErrorCode"],
  },
  "capability.check_failed": {
    title: "The capability's check failed",
    meaning: "The check of a capability failed for a reason no more specific code names.",
    reaction: "Review the capability's configuration; contact support if the next check fails again.",
    usedAs: ["reasonCode", "blockingReason", "lastErrorCode"],
  },
  "activation.capability_unchecked": {
    title: "A required capability was not checked yet",
    meaning: "Activation waits for the first check of a capability it requires.",
    reaction: "Nothing to fix yet: wait for the check, then read GET /activation again.",
    usedAs: ["blockingReason"],
  },
  "capability.report_invalid": {
    title: "The capability check report is invalid",
    meaning:
      "A capability check report named a malformed capability, a result other than pass or fail, or a reason code that is missing or not a capability reason code.",
    reaction: "Fix the report (admin `capability report`) as the message says and send it again.",
    usedAs: ["internal"],
  },
} as const satisfies CodeEntries;

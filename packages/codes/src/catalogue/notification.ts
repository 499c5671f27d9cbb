import type { CodeEntries } from "../code-entry.js";

/** Notifications (spec 2.3, 4.2, 7.2) and the messaging channel. */
export const notificationCodes = {
  "partner.notification_invalid": {
    status: 400,
    title: "The notification request is invalid",
    meaning: "A bad or unknown `type`, a missing `actor`, or a template field missing or over 300 characters.",
    reaction: "Fix the request; never retry it as it is.",
    usedAs: ["problem"],
  },
  "partner.notification_recipient_invalid": {
    status: 400,
    title: "The recipient is not a valid phone number",
    meaning: "`to` is not 8-15 digits with an optional leading `+`.",
    reaction: "Fix the number; never retry it as it is.",
    usedAs: ["problem"],
  },
  "partner.channel_not_ready": {
    status: 409,
    title: "The messaging channel cannot send",
    meaning: "The tenant's messaging channel is not ready.",
    reaction: "Read GET /capabilities; send again once the channel is ready.",
    usedAs: ["problem", "reasonCode"],
  },
  "partner.recipient_opted_out": {
    status: 409,
    title: "The recipient has opted out",
    meaning: "The recipient withdrew consent to this tenant's messages.",
    reaction: "Do not send to this recipient again unless they opt back in.",
    usedAs: ["problem", "reasonCode"],
  },
  "partner.recipient_undeliverable": {
    status: 409,
    title: "The recipient cannot receive this message",
    meaning: "The channel reports the recipient cannot be reached with this message.",
    reaction: "Check the number with the customer; do not retry as is.",
    usedAs: ["problem", "reasonCode"],
  },
  "partner.template_unavailable": {
    status: 409,
    title: "The message template is not available",
    meaning: "The channel does not (yet) accept the template this type uses.",
    reaction: "Retry later; contact support if it persists.",
    usedAs: ["problem", "reasonCode"],
  },
  "partner.channel_send_failed": {
    status: 409,
    title: "The messaging channel refused the message",
    meaning: "The channel refused the message for a reason of its own.",
    reaction: "Read the resource, then decide; retry later with a new Idempotency-Key only if still wanted.",
    usedAs: ["problem", "reasonCode"],
  },
  "partner.action_outcome_unknown": {
    status: 409,
    title: "The outcome of the action is unknown",
    meaning: "Delivery could not be verified; the message may or may not have been sent.",
    reaction: "Check the conversation transcript before acting again.",
    usedAs: ["problem", "reasonCode"],
  },
  "partner.channel_rate_limited": {
    status: 429,
    title: "The messaging channel is rate limited",
    meaning:
      "The tenant's number is at its throughput: our pacing refused the send before recording anything (`Retry-After` says when the number has room), or the provider throttled it (`Retry-After` 5).",
    reaction: "Honour `Retry-After`, else back off; retry with the same Idempotency-Key.",
    usedAs: ["problem", "reasonCode"],
  },
} as const satisfies CodeEntries;

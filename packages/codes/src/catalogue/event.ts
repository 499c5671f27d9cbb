import type { CodeEntries } from "../code-entry.js";

const producer =
  "Internal contract (webhooks EventService / admin `event emit`): platform producers and operators see it, partners never";

/**
 * Events entering through the internal contract (EventService, admin `event emit`), and the
 * reason codes the platform's event snapshots carry (escalation.raised's `reason_code`,
 * escalation.resolved's `resolution_code`, booking.cancelled's `reason_code`). Snapshots carry
 * codes like these, never conversation content (spec 2.7).
 */
export const eventCodes = {
  "event.type_unknown": {
    title: "The event type is unknown",
    meaning: `${producer}: the type is not a subscribable type of the event catalog.`,
    reaction: "The producer publishes a catalog type.",
    usedAs: ["internal"],
  },
  "event.type_not_publishable": {
    title: "The event type is emitted by the platform itself",
    meaning: `${producer}: only conversation.*, booking.* and escalation.* may be published; usage.* comes from metering, capability.* from capability reports (admin \`capability report\`), tenant.* from activation.`,
    reaction: "Use the path the detail names (capability report, activation) instead of publishing.",
    usedAs: ["internal"],
  },
  "event.invalid": {
    title: "The event is invalid",
    meaning: `${producer}: the tenant id, event id, occurred_at or the snapshot breaks a rule (a missing id, an unknown field, free text); the message names every problem.`,
    reaction: "The producer fixes the event; never retried as it is.",
    usedAs: ["internal"],
  },
  "escalation.customer_requested_human": {
    title: "The customer asked for a person",
    meaning: "escalation.raised: the customer asked to talk to a member of staff.",
    reaction: "Have staff pick up the conversation; resolve the escalation when done.",
    usedAs: ["reasonCode"],
  },
  "escalation.ai_uncertain": {
    title: "The AI was not confident enough to answer",
    meaning: "escalation.raised: the AI could not answer with enough confidence and handed over.",
    reaction: "Have staff answer the customer; consider adding the missing information to the tenant's knowledge.",
    usedAs: ["reasonCode"],
  },
  "escalation.complaint": {
    title: "The customer complained",
    meaning: "escalation.raised: the conversation was recognised as a complaint.",
    reaction: "Have staff handle the complaint.",
    usedAs: ["reasonCode"],
  },
  "escalation.booking_failed": {
    title: "A booking could not be made",
    meaning:
      "escalation.raised: the AI tried to create or change a booking and the tenant's booking system refused or failed.",
    reaction: "Have staff make the booking by hand; check the booking capability.",
    usedAs: ["reasonCode"],
  },
  "escalation.policy_restricted": {
    title: "The request is outside what the AI may handle",
    meaning:
      "escalation.raised: the customer asked for something the tenant's policy reserves for staff (refunds, medical advice, ...).",
    reaction: "Have staff handle the request.",
    usedAs: ["reasonCode"],
  },
  "escalation.resolved_by_staff": {
    title: "Staff resolved the escalation",
    meaning: "escalation.resolved `resolution_code`: a member of staff handled the conversation.",
    reaction: "None; the attention item closes.",
    usedAs: ["reasonCode"],
  },
  "escalation.resolved_by_ai": {
    title: "The AI resolved the escalation",
    meaning: "escalation.resolved `resolution_code`: the conversation went back to the AI and it finished it.",
    reaction: "None; the attention item closes.",
    usedAs: ["reasonCode"],
  },
  "escalation.customer_inactive": {
    title: "The customer stopped answering",
    meaning: "escalation.resolved `resolution_code`: closed because the customer did not reply.",
    reaction: "None; follow up with the customer if wanted.",
    usedAs: ["reasonCode"],
  },
  "booking.cancelled_by_customer": {
    title: "The customer cancelled the booking",
    meaning: "booking.cancelled `reason_code`: the customer asked for the cancellation.",
    reaction: "None; the slot is free again.",
    usedAs: ["reasonCode"],
  },
  "booking.cancelled_by_business": {
    title: "The business cancelled the booking",
    meaning: "booking.cancelled `reason_code`: the tenant's staff or system cancelled it.",
    reaction: "Make sure the customer was told.",
    usedAs: ["reasonCode"],
  },
  "booking.rescheduled": {
    title: "The booking was moved",
    meaning:
      "booking.cancelled `reason_code`: cancelled because a new booking replaced it (a booking.created follows).",
    reaction: "Follow the new booking.",
    usedAs: ["reasonCode"],
  },
} as const satisfies CodeEntries;

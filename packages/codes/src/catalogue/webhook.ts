import type { CodeEntries } from "../code-entry.js";

/** Webhook endpoints, deliveries and the events they carry. */
export const webhookCodes = {
  "webhook.endpoint_invalid": {
    status: 400,
    title: "The webhook endpoint is invalid",
    meaning: "The endpoint's url, description or event filters break a rule; `detail` names every problem.",
    reaction: "Fix the request; never retry it as it is.",
    usedAs: ["problem"],
  },
  "webhook.target_not_allowed": {
    status: 400,
    title: "The webhook URL's host is not a public address, or its port is not allowed",
    meaning: "The URL resolves to a loopback, private, link-local or metadata address, or uses a port not allowed.",
    reaction: "Use a public HTTPS URL on an allowed port.",
    usedAs: ["problem", "reasonCode"],
  },
  "webhook.event_type_unknown": {
    status: 400,
    title: "The event type is unknown",
    meaning: "A filter or test names a type that is not in the event catalog.",
    reaction: "Pick a type from GET /webhooks/event-types.",
    usedAs: ["problem"],
  },
  "webhook.event_type_not_subscribable": {
    status: 400,
    title: "The event type cannot be subscribed to yet",
    meaning: "The type is listed as coming soon.",
    reaction: "Subscribe to it once the catalog lists it as subscribable.",
    usedAs: ["problem"],
  },
  "webhook.endpoint_not_found": {
    status: 404,
    title: "Webhook endpoint not found",
    meaning: "No endpoint with this id exists for this tenant (or it was deleted).",
    reaction: "Verify the id (list the endpoints); no blind retry.",
    usedAs: ["problem"],
  },
  "webhook.delivery_not_found": {
    status: 404,
    title: "Webhook delivery not found",
    meaning: "No delivery with this id exists for this endpoint (or it is past retention).",
    reaction: "Verify the id (list the deliveries); no blind retry.",
    usedAs: ["problem"],
  },
  "webhook.version_mismatch": {
    status: 412,
    title: "The webhook endpoint has changed since it was read",
    meaning: "`expectedVersion` no longer matches the endpoint's `version`.",
    reaction: "Re-read the endpoint and retry with its current version.",
    usedAs: ["problem"],
  },
  "webhook.delivery_not_redrivable": {
    status: 409,
    title: "The delivery cannot be redriven",
    meaning: "Only a dead-lettered or failed delivery can be redriven.",
    reaction: "Read the delivery, then decide.",
    usedAs: ["problem"],
  },
  "webhook.redrive_window_closed": {
    status: 409,
    title: "The delivery is past the redrive window",
    meaning: "Its event is older than the 30-day retention.",
    reaction: "Do not retry; reconcile from your own records or the polls.",
    usedAs: ["problem"],
  },
  "webhook.endpoint_dead_lettered": {
    title: "A webhook endpoint dead-lettered a delivery",
    meaning: "A delivery failed 8 attempts; the endpoint was paused and needs attention.",
    reaction: "Fix the receiver, resume the endpoint, and redrive the dead-lettered deliveries.",
    usedAs: ["reasonCode"],
  },
} as const satisfies CodeEntries;

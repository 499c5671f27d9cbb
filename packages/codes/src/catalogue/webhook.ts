import type { CodeEntries } from "../code-entry.js";

const subProblem =
  "A sub-problem of `webhook.endpoint_invalid`: the problem's `code` is `webhook.endpoint_invalid` and its `detail` names this problem in words";
const secrets =
  "Operator configuration (SECRETS_KEY) or stored data; the service logs it and a partner sees 503 or nothing";

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
    meaning:
      "Only a succeeded (resent), dead-lettered or failed (awaiting retry) delivery can be redriven; a pending or held one is still on its way.",
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
  "webhook.recovery_window_invalid": {
    status: 400,
    title: "The recovery window is invalid",
    meaning:
      "A recover's `since` is in the future, older than the 30-day retention (deliveries older than it cannot be redriven), or after `until`; `detail` says which.",
    reaction: "Choose a `since` within the retention and not in the future; never retry the request as it is.",
    usedAs: ["problem"],
  },
  "webhook.endpoint_paused": {
    status: 409,
    title: "The webhook endpoint is paused",
    meaning: "A recover was asked for a paused endpoint: its deliveries would only be held.",
    reaction: "Resume the endpoint (which releases its held deliveries), then recover.",
    usedAs: ["problem"],
  },
  "webhook.recovery_in_progress": {
    status: 409,
    title: "A recovery of this endpoint is already running",
    meaning: "An endpoint runs one recovery at a time; another is queued or running.",
    reaction: "Follow the running recovery (its id is in `detail`); recover again once it has finished.",
    usedAs: ["problem"],
  },
  "webhook.recovery_not_found": {
    status: 404,
    title: "Webhook recovery not found",
    meaning: "No recovery with this id exists for this endpoint.",
    reaction: "Verify the id; no blind retry.",
    usedAs: ["problem"],
  },
  "webhook.recovery_endpoint_deleted": {
    title: "The endpoint was deleted during the recovery",
    meaning: "A recovery stopped (state `failed`) because its endpoint was deleted.",
    reaction: "None; the endpoint receives nothing any more.",
    usedAs: ["reasonCode"],
  },
  "webhook.endpoint_dead_lettered": {
    title: "A webhook endpoint dead-lettered a delivery",
    meaning: "A delivery failed 8 attempts; the endpoint was paused and needs attention.",
    reaction: "Fix the receiver, resume the endpoint, and redrive the dead-lettered deliveries.",
    usedAs: ["reasonCode"],
  },
  "webhook.url_invalid": {
    title: "The endpoint URL is not a valid absolute URL",
    meaning: `${subProblem}: the url is too long, has surrounding spaces, is not absolute or names no host.`,
    reaction: "Fix the url.",
    usedAs: ["internal"],
  },
  "webhook.url_not_https": {
    title: "The endpoint URL is not https",
    meaning: `${subProblem}: the url does not use https.`,
    reaction: "Use an https URL.",
    usedAs: ["internal"],
  },
  "webhook.url_has_credentials": {
    title: "The endpoint URL carries credentials",
    meaning: `${subProblem}: the url has a user name or password.`,
    reaction: "Remove the credentials; authenticate deliveries with the signature.",
    usedAs: ["internal"],
  },
  "webhook.url_has_fragment": {
    title: "The endpoint URL has a fragment",
    meaning: `${subProblem}: the url has a #fragment.`,
    reaction: "Remove the fragment.",
    usedAs: ["internal"],
  },
  "webhook.description_invalid": {
    title: "The endpoint description is invalid",
    meaning: `${subProblem}: the description is too long or has control characters.`,
    reaction: "Fix the description.",
    usedAs: ["internal"],
  },
  "webhook.update_empty": {
    title: "The update changes nothing",
    meaning: `${subProblem}: an update names none of url, description, eventTypes.`,
    reaction: "Send at least one field to change.",
    usedAs: ["internal"],
  },
  "webhook.event_filters_required": {
    title: "The endpoint has no event filter",
    meaning: `${subProblem}: eventTypes is empty.`,
    reaction: "Subscribe to at least one type.",
    usedAs: ["internal"],
  },
  "webhook.event_filters_too_many": {
    title: "The endpoint has too many event filters",
    meaning: `${subProblem}: more than 50 event filters.`,
    reaction: "Use family wildcards (`booking.*`) instead.",
    usedAs: ["internal"],
  },
  "webhook.event_filters_invalid": {
    title: "The event filters are invalid",
    meaning: `${subProblem}: the filters alone, checked outside an endpoint.`,
    reaction: "Fix the filters.",
    usedAs: ["internal"],
  },
  "webhook.envelope_invalid": {
    title: "The event cannot be built into a webhook envelope",
    meaning:
      "Internal: the fields of an event cannot form a valid envelope; a published event is refused with `event.invalid`, a bus message is dropped and logged.",
    reaction: "None for a partner; the producer is fixed.",
    usedAs: ["internal"],
  },
  "webhook.delivery_transition_invalid": {
    title: "The delivery cannot make this transition",
    meaning:
      "Internal: the delivery worker tried to attempt, hold or release a delivery in a state that does not allow it (a lost race, logged).",
    reaction: "None for a partner.",
    usedAs: ["internal"],
  },
  "webhook.retry_delays_invalid": {
    title: "The retry delays are invalid",
    meaning:
      "Operator configuration: the webhooks service's retry delay setting is malformed; the service refuses to start.",
    reaction: "The operator fixes the setting.",
    usedAs: ["internal"],
  },
  "webhook.secrets_key_invalid": {
    title: "SECRETS_KEY is invalid",
    meaning: `${secrets}: SECRETS_KEY is malformed; the service refuses to start.`,
    reaction: "The operator fixes SECRETS_KEY.",
    usedAs: ["internal"],
  },
  "webhook.secrets_key_unknown": {
    title: "A sealed secret names a key SECRETS_KEY does not hold",
    meaning: `${secrets}: a stored secret was sealed under a key id that was removed from SECRETS_KEY.`,
    reaction: "The operator restores the key id in SECRETS_KEY.",
    usedAs: ["internal"],
  },
  "webhook.sealed_secret_malformed": {
    title: "A stored sealed secret is malformed",
    meaning: `${secrets}: a stored secret is not a sealed secret.`,
    reaction: "The operator repairs the row (rotate the endpoint's secret).",
    usedAs: ["internal"],
  },
  "webhook.secret_decryption_failed": {
    title: "A sealed secret does not authenticate",
    meaning: `${secrets}: a stored secret does not decrypt under its key.`,
    reaction: "The operator checks SECRETS_KEY and rotates the endpoint's secret.",
    usedAs: ["internal"],
  },
} as const satisfies CodeEntries;

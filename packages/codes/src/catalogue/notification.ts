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
  "notification.not_found": {
    status: 404,
    title: "No such notification",
    meaning:
      "No notification with this id exists for this tenant (unknown, or another tenant's: the two look the same).",
    reaction: "Verify the notification id (the send's `notificationId`); no blind retry.",
    usedAs: ["problem"],
  },
  "notification.delivery_failed": {
    title: "The message was not delivered",
    meaning:
      "The channel accepted the message but later reported that it could not be delivered, for a reason not listed more precisely.",
    reaction: "Read the notification; reach the customer another way, or send again later only if still wanted.",
    usedAs: ["reasonCode"],
  },
  "provider.callback_signature_invalid": {
    status: 401,
    title: "The provider callback's signature is missing or wrong",
    meaning:
      "A POST to the provider callback path without an `X-Hub-Signature-256` header matching the raw body and the app secret; nothing was recorded.",
    reaction: "Only the provider calls this path: check that the app secret configured here is the app's.",
    usedAs: ["problem"],
  },
  "provider.callback_verify_token_invalid": {
    status: 403,
    title: "The subscription handshake's verify token is wrong",
    meaning:
      "A GET to the provider callback path whose `hub.mode` is not `subscribe` or whose `hub.verify_token` is not the configured one.",
    reaction: "Set the same verify token in the provider's webhook settings and here (WHATSAPP_VERIFY_TOKEN).",
    usedAs: ["problem"],
  },
  "provider.callback_invalid": {
    status: 400,
    title: "The provider callback is not a notification",
    meaning:
      "A signed POST whose body is not a JSON object of the provider's notification shape; nothing was recorded.",
    reaction: "None for partners: only the provider calls this path.",
    usedAs: ["problem"],
  },
  "provider.callbacks_not_configured": {
    status: 404,
    title: "Provider callbacks are not configured",
    meaning:
      "The gateway has no app secret and verify token (WHATSAPP_APP_SECRET, WHATSAPP_VERIFY_TOKEN): the path answers nothing else.",
    reaction: "Operators: set both settings; see docs/notifications.md.",
    usedAs: ["problem"],
  },
  "channel.invalid": {
    status: 400,
    title: "The channel connection is invalid",
    meaning:
      "PUT /channel (or admin `tenant channel connect`): the WhatsApp Business Account id, phone number id, access token, a template, messagesPerSecond or a keyword list is malformed; the detail names each problem (never the token).",
    reaction: "Fix the body as the detail says; never retry as is.",
    usedAs: ["problem"],
  },
  "channel.not_connected": {
    status: 404,
    title: "No WhatsApp number is connected",
    meaning: "The tenant has not connected its own WhatsApp number (GET /channel).",
    reaction: "Connect one with PUT /channel; until then sends use the platform's fallback number, if it has one.",
    usedAs: ["problem"],
  },
  "channel.number_taken": {
    status: 409,
    title: "The phone number is connected to another tenant",
    meaning: "A phone number id sends for one tenant only; another tenant has connected this one.",
    reaction: "Connect a number of your own; a 409 on creating something that exists means it exists.",
    usedAs: ["problem"],
  },
  "consent.stop_keyword": {
    title: "The customer sent a stop keyword",
    meaning:
      "recipient.opted_out's reason_code: the customer replied with one of the tenant's stop keywords (STOP, UNSUBSCRIBE unless the tenant set others); sends to them answer 409 partner.recipient_opted_out.",
    reaction: "Stop messaging this customer; a start keyword from them (START) lifts it.",
    usedAs: ["reasonCode"],
  },
  "consent.start_keyword": {
    title: "The customer sent a start keyword",
    meaning: "recipient.opted_in's reason_code: the customer replied with one of the tenant's start keywords (START).",
    reaction: "None: sends to this customer are allowed again.",
    usedAs: ["reasonCode"],
  },
} as const satisfies CodeEntries;

import { timeOrderedId } from "@platform/service-kit/random-id";
import { DomainError, InvalidArgumentError } from "@platform/service-kit/errors";

/**
 * Notification requests (spec 2.3): the five supported types, their required template fields,
 * the fail-closed rules for retired types, retired fields, retired message keys and scheduling,
 * the one-line collapse and the rendered text (DESIGN.md §2).
 */
export const notificationTypes = ["reminder", "no_show", "cancelled", "rescheduled", "update"] as const;
export type NotificationType = (typeof notificationTypes)[number];

export const templateFields = ["clientName", "businessName", "serviceName", "when", "newWhen", "message"] as const;
export type TemplateField = (typeof templateFields)[number];

export const requiredFields: Record<NotificationType, readonly TemplateField[]> = {
  reminder: ["clientName", "businessName", "serviceName", "when"],
  no_show: ["clientName", "serviceName"],
  cancelled: ["clientName", "serviceName", "when"],
  rescheduled: ["clientName", "serviceName", "when", "newWhen"],
  update: ["clientName", "businessName", "message"],
};

/**
 * The rendered text per type. The order in which fields appear here is also the order of the
 * body parameters of the provider's template (see templateParameters).
 */
const templates: Record<NotificationType, string> = {
  reminder: "Hi {clientName}, this is a reminder of your {serviceName} with {businessName} on {when}.",
  no_show: "Hi {clientName}, we missed you at your {serviceName} appointment.",
  cancelled: "Hi {clientName}, your {serviceName} on {when} has been cancelled.",
  rescheduled: "Hi {clientName}, your {serviceName} has moved from {when} to {newWhen}.",
  update: "Hi {clientName}, an update from {businessName}: {message}",
};

/** Retired notification types (spec 2.3 rule 2); rejected as unknown types like any other. */
export const retiredTypes = ["payment_reminder", "receipt", "late_cancel_fee", "no_show_fee"] as const;

/** Retired message keys (spec 2.3 rule 3), in snake_case; rejected as unknown types. */
export const retiredMessageKeys = [
  "payment_reminder",
  "invoice_due",
  "payment_failed",
  "refund_processed",
  "late_cancel_fee",
  "no_show_fee",
  "receipt",
  "quote_approval",
  "on_my_way",
  "ready_for_pickup",
  "subject_recall",
  "renewal_notice",
  "weekly_digest",
  "vaccination_due",
  "service_due",
  "win_back",
  "fill_slot",
] as const;

/** Fields retired with the payment types (spec 2.3 rule 2). */
export const retiredFields = ["paymentUrl", "feeAmount"] as const;

/**
 * Timing and delivery-mode controls. Scheduling belongs to the caller (spec 1): these are
 * refused whatever the type, so no timing control can revive a retired message key.
 */
export const schedulingFields = [
  "sendAt",
  "scheduledAt",
  "scheduleAt",
  "sendAfter",
  "deliverAt",
  "deliveryTime",
  "delay",
  "delaySeconds",
  "deliveryMode",
  "mode",
  "timing",
  "schedule",
  "timezone",
  "ttl",
  "expiresAt",
] as const;

/** Other ways of naming a message than `type`; a message key never selects a template. */
export const messageKeyFields = ["messageKey", "templateKey", "template", "templateName", "templateId"] as const;

export const MAX_FIELD_CODE_POINTS = 300;
const RECIPIENT = /^\+?[0-9]{8,15}$/;

export interface NotificationActor {
  actorReference: string;
  delegationReference: string | null;
}

/** What a partner sent, as strings (the gateway checked the JSON shape). */
export interface NotificationInput {
  to: string | undefined;
  type: string | undefined;
  fields: Partial<Record<TemplateField, string>>;
  actor: { actorReference: string | undefined; delegationReference: string | undefined } | undefined;
  /** Names of request members that are not part of the notification request. */
  otherFields: string[];
}

export interface NotificationRequest {
  /** Digits only, no leading +. */
  recipient: string;
  type: NotificationType;
  /** Template fields as sent (validated), in templateFields order. */
  fields: Partial<Record<TemplateField, string>>;
  actor: NotificationActor;
}

export class NotificationInvalidError extends InvalidArgumentError {
  override name = "NotificationInvalidError";
  constructor(readonly problems: string[]) {
    super("partner.notification_invalid", problems.join("; "));
  }
}

export class RecipientInvalidError extends InvalidArgumentError {
  override name = "RecipientInvalidError";
  constructor(field = "to") {
    super(
      "partner.notification_recipient_invalid",
      `${field} must be a phone number in international format: 8-15 digits with an optional leading +`,
    );
  }
}

export class ActionOutcomeUnknownError extends DomainError {
  override name = "ActionOutcomeUnknownError";
  constructor() {
    super(
      "failed_precondition",
      "partner.action_outcome_unknown",
      "delivery could not be verified; check the conversation transcript before acting again",
    );
  }
}

const codePoints = (value: string) => [...value].length;

/** Any run of whitespace (CR, LF, tabs, NEL, Unicode line and paragraph separators, ...) becomes one space. */
export function collapseToOneLine(value: string): string {
  return value.replace(/[\s\u0085]+/gu, " ").trim();
}

/** 8-15 digits with an optional leading +; returns the digits. */
export function parseRecipient(value: string, field = "to"): string {
  if (!RECIPIENT.test(value)) throw new RecipientInvalidError(field);
  return value.startsWith("+") ? value.slice(1) : value;
}

/** The recipient for logs: country prefix and the last 2 digits, the rest masked. */
export function maskRecipient(digits: string): string {
  return `+${digits.slice(0, 2)}${"*".repeat(Math.max(0, digits.length - 4))}${digits.slice(-2)}`;
}

function describeOtherField(name: string): string {
  if ((retiredFields as readonly string[]).includes(name)) return `${name} is a retired field`;
  if ((schedulingFields as readonly string[]).includes(name)) {
    return `${name} is not supported: sends are immediate and scheduling belongs to the caller`;
  }
  if ((messageKeyFields as readonly string[]).includes(name)) {
    return `${name} is not supported: the message is chosen by type alone`;
  }
  return `${name} is not a field of the notification request`;
}

/**
 * Validates a request, fail closed: every problem is reported at once, naming its field. When
 * the only problem is the form of `to` the error is RecipientInvalidError; otherwise
 * NotificationInvalidError lists everything (including `to`).
 */
export function validateNotification(input: NotificationInput): NotificationRequest {
  const problems: string[] = [];
  let recipientProblem = false;

  for (const name of [...input.otherFields].sort()) problems.push(describeOtherField(name));

  let type: NotificationType | undefined;
  if (input.type === undefined || input.type === "") problems.push("type is required");
  else if ((notificationTypes as readonly string[]).includes(input.type)) type = input.type as NotificationType;
  else {
    problems.push(
      `type ${JSON.stringify(input.type.slice(0, 64))} is not a supported notification type ` +
        `(supported: ${notificationTypes.join(", ")})`,
    );
  }

  let recipient = "";
  if (input.to === undefined || input.to === "") problems.push("to is required");
  else if (!RECIPIENT.test(input.to)) {
    recipientProblem = true;
    problems.push("to must be 8-15 digits with an optional leading +");
  } else recipient = parseRecipient(input.to);

  const fields: Partial<Record<TemplateField, string>> = {};
  for (const name of templateFields) {
    const value = input.fields[name];
    if (value === undefined) continue;
    if (codePoints(value) > MAX_FIELD_CODE_POINTS) {
      problems.push(`${name} must be at most ${MAX_FIELD_CODE_POINTS} characters (got ${codePoints(value)})`);
    }
    fields[name] = value;
  }
  if (type) {
    for (const name of requiredFields[type]) {
      const value = fields[name];
      if (value === undefined || collapseToOneLine(value) === "") problems.push(`${name} is required for type ${type}`);
    }
  }

  let actor: NotificationActor | undefined;
  if (input.actor === undefined) problems.push("actor is required");
  else {
    const { actorReference, delegationReference } = input.actor;
    if (actorReference === undefined || actorReference.trim() === "") problems.push("actor.actorReference is required");
    else if (codePoints(actorReference) > MAX_FIELD_CODE_POINTS) {
      problems.push(`actor.actorReference must be at most ${MAX_FIELD_CODE_POINTS} characters`);
    }
    if (delegationReference !== undefined && codePoints(delegationReference) > MAX_FIELD_CODE_POINTS) {
      problems.push(`actor.delegationReference must be at most ${MAX_FIELD_CODE_POINTS} characters`);
    }
    actor = {
      actorReference: actorReference ?? "",
      delegationReference:
        delegationReference === undefined || delegationReference.trim() === "" ? null : delegationReference,
    };
  }

  if (problems.length === 1 && recipientProblem) throw new RecipientInvalidError();
  if (problems.length > 0 || !type || !actor) throw new NotificationInvalidError(problems);
  return { recipient, type, fields, actor };
}

/** The template's fields in the order they appear in its text. */
export function templateParameters(type: NotificationType): TemplateField[] {
  return [...templates[type].matchAll(/\{([A-Za-z]+)\}/g)].map((m) => m[1] as TemplateField);
}

/** Body parameters for the provider's template: each field collapsed to one line, in template order. */
export function renderParameters(request: Pick<NotificationRequest, "type" | "fields">): string[] {
  return templateParameters(request.type).map((name) => collapseToOneLine(request.fields[name] ?? ""));
}

/** The text the customer receives, as recorded on the transcript. */
export function renderNotification(request: Pick<NotificationRequest, "type" | "fields">): string {
  return templates[request.type].replace(/\{([A-Za-z]+)\}/g, (_, name: string) =>
    collapseToOneLine(request.fields[name as TemplateField] ?? ""),
  );
}

/** A stable serialization of what the request asks for: the idempotency fingerprint's input. */
export function canonicalNotification(request: NotificationRequest): string {
  return JSON.stringify([
    request.recipient,
    request.type,
    templateFields.map((name) => request.fields[name] ?? null),
    request.actor.actorReference,
    request.actor.delegationReference,
  ]);
}

export type DeliveryState = "sent" | "unknown" | "failed";

export function newNotificationId(): string {
  return timeOrderedId("ntf_");
}

export function newTranscriptEntryId(): string {
  return timeOrderedId("msg_");
}

import type { ConversationMessage, SendNotificationRequest, SendNotificationResponse } from "@platform/proto/notify/v1";
import { ApiError, callService as call } from "./api-error.js";
import { readJsonBody } from "./json-body.js";
import { requestIdOf, tenantIdOf, type TenantRoute } from "./tenant-route.js";
import { pageParameters, pageQuery } from "./page-query.js";

/** Seconds a partner should wait after partner.channel_rate_limited before retrying with the same key. */
export const CHANNEL_RETRY_AFTER_SECONDS = 5;

const stringMembers = {
  to: "to",
  type: "type",
  clientName: "clientName",
  businessName: "businessName",
  serviceName: "serviceName",
  when: "when",
  newWhen: "newWhen",
  message: "message",
} as const satisfies Record<string, keyof SendNotificationRequest>;

const invalid = (detail: string) => new ApiError(400, detail, { code: "partner.notification_invalid" });
const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value);

/**
 * The HTTP shape of a notification request: a JSON object whose members are strings (actor an
 * object, delegationReference a string or null). Every member is passed on; which types, fields
 * and lengths are allowed is notify's business (unknown members go as `otherFields`).
 */
export function toSendNotificationRequest(
  body: unknown,
  tenantId: string,
  idempotencyKey: string,
): SendNotificationRequest {
  if (!isObject(body)) throw invalid("the request body must be a JSON object");
  const request: SendNotificationRequest = { tenantId, idempotencyKey, actor: undefined, otherFields: [] };
  const problems: string[] = [];
  for (const [name, value] of Object.entries(body)) {
    if (Object.hasOwn(stringMembers, name)) {
      if (typeof value === "string") request[stringMembers[name as keyof typeof stringMembers]] = value;
      else problems.push(`${name} must be a string`);
    } else if (name === "actor") {
      if (value === null) continue;
      if (!isObject(value)) {
        problems.push("actor must be an object with actorReference");
        continue;
      }
      request.actor = {};
      for (const [member, memberValue] of Object.entries(value)) {
        if (member === "actorReference") {
          if (typeof memberValue === "string") request.actor.actorReference = memberValue;
          else problems.push("actor.actorReference must be a string");
        } else if (member === "delegationReference") {
          if (typeof memberValue === "string") request.actor.delegationReference = memberValue;
          else if (memberValue !== null) problems.push("actor.delegationReference must be a string or null");
        } else request.otherFields.push(`actor.${member}`);
      }
    } else request.otherFields.push(name);
  }
  if (problems.length > 0) throw invalid(problems.join("; "));
  return request;
}

function sendResultToJson(response: SendNotificationResponse): Record<string, unknown> {
  return {
    notificationId: response.notificationId,
    state: response.state,
    type: response.type,
    createdAt: response.createdAt,
    idempotencyStatus: response.replayed ? "replayed" : "applied",
  };
}

function messageToJson(message: ConversationMessage): Record<string, unknown> {
  return {
    id: message.id,
    notificationId: message.notificationId,
    type: message.type,
    text: message.text,
    state: message.state,
    actor: {
      actorReference: message.actorReference,
      delegationReference: message.delegationReference ?? null,
    },
    createdAt: message.createdAt,
    updatedAt: message.updatedAt,
  };
}

const tag = "notifications";

/** Notifications and conversation transcripts: their rows of the tenant interface's route table. */
export const notificationRoutes: TenantRoute[] = [
  {
    operationId: "sendNotification",
    method: "POST",
    path: "/api/v1/tenants/:tenantId/notifications",
    scope: "notification:send",
    mutation: true,
    tag,
    summary: "Send a template message to a customer's phone.",
    description:
      "Sends a pre-approved template message once per Idempotency-Key and records it on the customer's " +
      "conversation transcript. `state` sent is not proof that the recipient read it. A 409 " +
      "`partner.action_outcome_unknown` means the message may or may not have gone out: read the transcript " +
      "before sending again; a repeat with the same key never sends twice.",
    requestSchema: "NotificationRequest",
    responseSchema: "NotificationResult",
    problems: [
      "partner.notification_invalid",
      "partner.notification_recipient_invalid",
      "account.tenant_not_activated",
      "account.testing_allowance_exhausted",
      "partner.channel_not_ready",
      "partner.recipient_opted_out",
      "partner.recipient_undeliverable",
      "partner.template_unavailable",
      "partner.channel_send_failed",
      "partner.action_outcome_unknown",
      "partner.channel_rate_limited",
    ],
    async handle(ctx, deps) {
      const request = toSendNotificationRequest(
        await readJsonBody(ctx),
        tenantIdOf(ctx),
        ctx.state.idempotencyKey as string,
      );
      let response: SendNotificationResponse;
      try {
        response = await call(deps.notify.sendNotification(request, requestIdOf(ctx)), {
          idempotencyKey: request.idempotencyKey,
          howToCheck: "The notification may have been sent: read the conversation transcript before sending it again",
        });
      } catch (error) {
        if (error instanceof ApiError && error.options.code === "partner.channel_rate_limited") {
          throw new ApiError(error.status, error.message, {
            ...error.options,
            headers: { "retry-after": String(CHANNEL_RETRY_AFTER_SECONDS) },
          });
        }
        throw error;
      }
      if (response.replayed) ctx.set("Idempotent-Replayed", "true");
      ctx.body = sendResultToJson(response);
    },
  },
  {
    operationId: "listConversationMessages",
    method: "GET",
    path: "/api/v1/tenants/:tenantId/conversations/:to/messages",
    scope: "tenant:read",
    mutation: false,
    tag,
    summary: "Read a customer's conversation transcript.",
    description:
      "Newest first: each notification's rendered text, its state (sent, unknown, failed) and actor " +
      "references. Pass `nextCursor` back as `cursor` until it is null.",
    parameters: [
      {
        name: "to",
        in: "path",
        required: true,
        description: "The customer's phone number: 8-15 digits with an optional leading + (as %2B).",
        schema: { type: "string", pattern: "^\\+?[0-9]{8,15}$" },
      },
      ...pageParameters,
    ],
    responseSchema: "ConversationMessages",
    problems: ["partner.notification_recipient_invalid"],
    async handle(ctx, deps) {
      const { limit, cursor } = pageQuery(ctx);
      const to = String((ctx.params as Record<string, string>).to ?? "");
      const response = await call(
        deps.notify.listConversationMessages({ tenantId: tenantIdOf(ctx), to, limit, cursor }, requestIdOf(ctx)),
      );
      ctx.body = {
        messages: response.messages.map(messageToJson),
        nextCursor: response.nextCursor === "" ? null : response.nextCursor,
      };
    },
  },
];

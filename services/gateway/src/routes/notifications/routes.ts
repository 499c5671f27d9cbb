import type { SendNotificationResponse } from "@platform/proto/notify/v1";
import { ApiError, callService } from "../../http/api-error.js";
import { readJsonBody } from "../../http/middleware/json-body.js";
import { idempotencyKeyOf, callOptionsOf, tenantIdOf, type TenantRoute } from "../../http/route.js";
import { pageParameters, pageQuery } from "../../http/page-query.js";
import { messageToJson, notificationToJson, sendResultToJson } from "./json.js";

/**
 * On a first execution by a tenant on the testing plan: where its month's free sends stand after
 * this send (the tenant record's `testingAllowance` shows the same at any time).
 */
const testingAllowanceHeaders = {
  "X-Testing-Allowance-Limit": {
    description: "Testing plan only: the free sends of a UTC month.",
    schema: { type: "string", pattern: "^[1-9][0-9]*$" },
  },
  "X-Testing-Allowance-Remaining": {
    description:
      "Testing plan only: free sends left this UTC month after this one; at 0 further sends answer 409 `account.testing_allowance_exhausted`.",
    schema: { type: "string", pattern: "^[0-9]+$" },
  },
  "X-Testing-Allowance-Reset": {
    description: "Testing plan only: when the allowance starts again (RFC 3339 UTC, the next month's first instant).",
    schema: { type: "string", format: "date-time" },
  },
};
import { toSendNotificationRequest } from "./shapes.js";

/**
 * Seconds a partner should wait after the provider's own partner.channel_rate_limited (its 130429
 * and kin) before retrying with the same key; notify's pacing sends its own, computed, Retry-After.
 */
export const CHANNEL_RETRY_AFTER_SECONDS = 5;

const tag = "notifications";

/** Notifications and conversation transcripts: their rows of the tenant interface's route table. */
export const notificationRoutes: TenantRoute[] = [
  {
    surface: "tenant",
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
      "before sending again; a repeat with the same key never sends twice. On the testing plan the answer " +
      "says how many free sends are left this UTC month (`X-Testing-Allowance-*`; the tenant record's " +
      "`testingAllowance` at any time); a 409 " +
      "`account.testing_allowance_exhausted` is not remembered by the key: after a move to the commercial " +
      "plan the same request with the same key sends. Sends through one number are paced at its throughput " +
      "across the whole service: over it the answer is 429 `partner.channel_rate_limited` with the " +
      "`Retry-After` the pacing computed, nothing is recorded, and the same request with the same key " +
      "sends once after it.",
    requestSchema: "NotificationRequest",
    responseSchema: "NotificationResult",
    successHeaders: testingAllowanceHeaders,
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
      const request = toSendNotificationRequest(await readJsonBody(ctx), tenantIdOf(ctx), idempotencyKeyOf(ctx));
      let response: SendNotificationResponse;
      try {
        response = await callService(deps.notify.sendNotification(request, callOptionsOf(ctx)), {
          idempotencyKey: request.idempotencyKey,
          howToCheck: "The notification may have been sent: read the conversation transcript before sending it again",
        });
      } catch (error) {
        // notify's pacing says when its number has room again (the Retry-After it sent); the
        // provider's own throttling (130429) does not, so the partner is told to wait a few seconds.
        if (
          error instanceof ApiError &&
          error.options.code === "partner.channel_rate_limited" &&
          error.options.headers?.["retry-after"] === undefined
        ) {
          throw new ApiError(error.status, error.message, {
            ...error.options,
            headers: { "retry-after": String(CHANNEL_RETRY_AFTER_SECONDS) },
          });
        }
        throw error;
      }
      if (response.replayed) ctx.set("Idempotent-Replayed", "true");
      const allowance = response.testingAllowance;
      if (allowance) {
        ctx.set("X-Testing-Allowance-Limit", allowance.limit);
        ctx.set("X-Testing-Allowance-Remaining", allowance.remaining);
        ctx.set("X-Testing-Allowance-Reset", allowance.resetsAt);
      }
      ctx.body = sendResultToJson(response);
    },
  },
  {
    surface: "tenant",
    operationId: "getNotification",
    method: "GET",
    path: "/api/v1/tenants/:tenantId/notifications/:notificationId",
    scope: "notification:send",
    alsoScopes: ["tenant:read"],
    mutation: false,
    tag,
    summary: "Read a notification's state and delivery status.",
    description:
      "The send's `state` (spec 2.4) and the delivery status the channel reports afterwards, which never goes " +
      "backwards: `accepted` -> `sent` -> `delivered` -> `read`, or `failed` with a catalogue `reasonCode`; each " +
      "step with its time (null until reached; `read` implies `delivered`). Never the message text or the " +
      "recipient's number. The same steps are announced as the `notification.delivered`, `notification.read` and " +
      "`notification.failed` webhook events.",
    parameters: [
      {
        name: "notificationId",
        in: "path",
        required: true,
        description: "The send's `notificationId`.",
        schema: { type: "string", pattern: "^ntf_[0-9a-f]{24}$" },
      },
    ],
    responseSchema: "NotificationStatus",
    problems: ["notification.not_found"],
    async handle(ctx, deps) {
      const notificationId = String((ctx.params as Record<string, string>).notificationId ?? "");
      const response = await callService(
        deps.notify.getNotification({ tenantId: tenantIdOf(ctx), notificationId }, callOptionsOf(ctx)),
      );
      if (!response.notification) throw new ApiError(500, "notify answered without the notification");
      ctx.body = notificationToJson(response.notification);
    },
  },
  {
    surface: "tenant",
    operationId: "listConversationMessages",
    method: "GET",
    path: "/api/v1/tenants/:tenantId/conversations/:to/messages",
    scope: "tenant:read",
    mutation: false,
    tag,
    summary: "Read a customer's conversation transcript.",
    description:
      "Newest first: each notification's rendered text, its state (sent, unknown, failed), its delivery " +
      "status (accepted, sent, delivered, read, failed; null while unknown) and actor references. Pass `nextCursor` back as `cursor` until it is null.",
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
      const response = await callService(
        deps.notify.listConversationMessages({ tenantId: tenantIdOf(ctx), to, limit, cursor }, callOptionsOf(ctx)),
      );
      ctx.body = {
        messages: response.messages.map(messageToJson),
        nextCursor: response.nextCursor === "" ? null : response.nextCursor,
      };
    },
  },
];

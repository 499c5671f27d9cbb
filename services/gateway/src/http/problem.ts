import type { Context } from "koa";
import type { ApiError } from "./api-error.js";

/**
 * Every problem code the tenant interface answers with, its HTTP status and its stable title: the
 * one catalogue. Partners branch on `code`; `title` and `detail` are for people and may change.
 * The OpenAPI document lists, per operation and status, the codes that operation can produce.
 */
export const problemCodes = {
  "request.invalid": { status: 400, title: "The request is invalid" },
  "request.body_invalid": { status: 400, title: "The request body is not valid JSON" },
  "request.idempotency_key_required": { status: 400, title: "An Idempotency-Key header is required" },
  "request.idempotency_key_invalid": { status: 400, title: "The Idempotency-Key header is malformed" },
  "auth.key_missing": { status: 401, title: "An API key is required" },
  "auth.key_invalid": { status: 401, title: "The API key is malformed, unknown or revoked" },
  "auth.scope_missing": { status: 403, title: "The API key lacks the scope this operation needs" },
  "tenant.not_found": { status: 404, title: "Tenant not found" },
  "request.route_not_found": { status: 404, title: "No such resource" },
  "request.method_not_allowed": { status: 405, title: "Method not allowed" },
  "idempotency.in_progress": { status: 409, title: "A request with this Idempotency-Key is in progress" },
  "request.body_too_large": { status: 413, title: "The request body is too large" },
  "request.unsupported_media_type": { status: 415, title: "Unsupported media type" },
  "idempotency.key_reused": { status: 422, title: "Idempotency-Key reused with a different request" },
  "usage.limits_invalid": { status: 400, title: "The usage limits are invalid" },
  "partner.notification_invalid": { status: 400, title: "The notification request is invalid" },
  "partner.notification_recipient_invalid": { status: 400, title: "The recipient is not a valid phone number" },
  "account.tenant_not_activated": { status: 409, title: "The tenant is not activated" },
  "account.testing_allowance_exhausted": { status: 409, title: "The testing allowance is used up" },
  "partner.channel_not_ready": { status: 409, title: "The messaging channel cannot send" },
  "partner.recipient_opted_out": { status: 409, title: "The recipient has opted out" },
  "partner.recipient_undeliverable": { status: 409, title: "The recipient cannot receive this message" },
  "partner.template_unavailable": { status: 409, title: "The message template is not available" },
  "partner.channel_send_failed": { status: 409, title: "The messaging channel refused the message" },
  "partner.action_outcome_unknown": { status: 409, title: "The outcome of the action is unknown" },
  "partner.channel_rate_limited": { status: 429, title: "The messaging channel is rate limited" },
  "webhook.endpoint_invalid": { status: 400, title: "The webhook endpoint is invalid" },
  "webhook.target_not_allowed": {
    status: 400,
    title: "The webhook URL's host is not a public address, or its port is not allowed",
  },
  "webhook.event_type_unknown": { status: 400, title: "The event type is unknown" },
  "webhook.event_type_not_subscribable": { status: 400, title: "The event type cannot be subscribed to yet" },
  "webhook.endpoint_not_found": { status: 404, title: "Webhook endpoint not found" },
  "webhook.delivery_not_found": { status: 404, title: "Webhook delivery not found" },
  "webhook.version_mismatch": { status: 412, title: "The webhook endpoint has changed since it was read" },
  "webhook.delivery_not_redrivable": { status: 409, title: "The delivery cannot be redriven" },
  "webhook.redrive_window_closed": { status: 409, title: "The delivery is past the redrive window" },
  "request.rate_limited": { status: 429, title: "Too many requests" },
  "service.internal_error": { status: 500, title: "Internal error" },
  "service.unavailable": { status: 503, title: "Service temporarily unavailable" },
} as const satisfies Record<string, { status: number; title: string }>;

export type ProblemCode = keyof typeof problemCodes;

/**
 * Which codes an operation can produce, by what it has (see `problemCodesOf` in tenant-route.ts).
 * Every tenant route passes the edge: rate limit, key, scope, tenant grant, a downstream call, and
 * a 405 for the other methods on its path.
 */
export const edgeProblemCodes = [
  "auth.key_missing",
  "auth.key_invalid",
  "auth.scope_missing",
  "tenant.not_found",
  "request.invalid",
  "request.method_not_allowed",
  "request.rate_limited",
  "service.internal_error",
  "service.unavailable",
] as const satisfies readonly ProblemCode[];

/** Routes with a JSON request body (json-body.ts). */
export const bodyProblemCodes = [
  "request.body_invalid",
  "request.body_too_large",
  "request.unsupported_media_type",
] as const satisfies readonly ProblemCode[];

/** Mutations: the Idempotency-Key header and the owning service's idempotency record. */
export const idempotencyProblemCodes = [
  "request.idempotency_key_required",
  "request.idempotency_key_invalid",
  "idempotency.in_progress",
  "idempotency.key_reused",
] as const satisfies readonly ProblemCode[];

/** The code used when an error carries none of its own. */
const codeForStatus: Record<number, ProblemCode> = {
  400: "request.invalid",
  401: "auth.key_invalid",
  403: "auth.scope_missing",
  404: "request.route_not_found",
  405: "request.method_not_allowed",
  413: "request.body_too_large",
  415: "request.unsupported_media_type",
  429: "request.rate_limited",
  500: "service.internal_error",
  503: "service.unavailable",
};

function isProblemCode(code: string | undefined): code is ProblemCode {
  return code !== undefined && Object.hasOwn(problemCodes, code);
}

export function problemType(code: string, baseUri: string | undefined): string {
  return baseUri ? `${baseUri}${code}` : `urn:problem:${code}`;
}

/** Writes an RFC 9457 problem document for the tenant interface. */
export function writeProblem(ctx: Context, error: ApiError, baseUri: string | undefined): void {
  const status = error.status >= 400 && error.status < 600 ? error.status : 500;
  const code = isProblemCode(error.options.code)
    ? error.options.code
    : (codeForStatus[status] ?? "service.internal_error");
  const known = problemCodes[code];
  ctx.status = status;
  ctx.type = "application/problem+json";
  ctx.body = {
    type: problemType(code, baseUri),
    title: known.title,
    status,
    detail: status >= 500 && status !== 503 ? "an unexpected error occurred" : error.message,
    code,
    correlationId: ctx.state.requestId as string,
  };
}

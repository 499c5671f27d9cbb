import { shapeSchema } from "../../http/openapi/shape-schema.js";
import { nextCursor, nullableTimestamp, ref, timestamp } from "../../http/openapi/schema-parts.js";
import { endpointUpdateShape, newEndpointShape, recoverShape, testDeliveryShape } from "./shapes.js";

const errorClasses = [
  "timeout",
  "tls",
  "refused_target",
  "connection",
  "http_3xx",
  "http_4xx",
  "http_5xx",
  "http_other",
];

const deliveryStatus = {
  type: "string",
  enum: ["pending", "succeeded", "awaiting_retry", "dead_lettered", "held"],
  description: "`held`: the endpoint is paused; resume releases it.",
};
const endpointProperties = {
  id: { type: "string", pattern: "^ep_[0-9a-f]{24}$" },
  url: { type: "string", description: "Canonical https URL." },
  description: { type: "string" },
  eventTypes: {
    type: "array",
    items: { type: "string" },
    description: "Exact event types and family wildcards such as `capability.*`, as subscribed.",
  },
  apiVersion: { type: "string", description: "The payload version pinned at creation, e.g. `2026-07-01`." },
  paused: { type: "boolean", description: "While paused, new deliveries are held." },
  attentionReason: {
    type: ["string", "null"],
    description: "Why the endpoint needs attention, e.g. `webhook.endpoint_dead_lettered`; cleared by resume.",
  },
  version: { type: "integer", minimum: 1, description: "Increases on every change; send as `expectedVersion`." },
  createdAt: timestamp,
  updatedAt: timestamp,
  previousSecretExpiresAt: {
    ...nullableTimestamp,
    description: "Until then the previous secret also signs (24 hours after the latest rotation).",
  },
  health: {
    type: "string",
    enum: ["healthy", "degraded", "failing", "paused"],
    description:
      "From the attempts of the last 24 hours: `paused` while paused; else `healthy` with no attempt or at least 95 % " +
      "succeeded, `degraded` from 50 % to under 95 %, `failing` under 50 %.",
  },
  successRate24h: {
    type: ["number", "null"],
    minimum: 0,
    maximum: 1,
    description: "Attempts succeeded / attempts made in the last 24 hours; null when none was made.",
  },
  attempts24h: { type: "integer", minimum: 0, description: "Attempts made in the last 24 hours." },
  attentionCause: {
    type: ["string", "null"],
    enum: [...errorClasses, null],
    description:
      "While `attentionReason` is `webhook.endpoint_dead_lettered`: the error class of the dead-lettered delivery's " +
      "last attempt. Cleared by resume.",
  },
  attentionSince: { ...nullableTimestamp, description: "When the dead-letter paused the endpoint; cleared by resume." },
  rateLimit: {
    type: ["integer", "null"],
    minimum: 1,
    maximum: 10000,
    description:
      "Deliveries per second to this endpoint from all our delivery processes together; null: unlimited. " +
      "Deliveries above it wait their turn (not an attempt).",
  },
};
const endpointRequired = Object.keys(endpointProperties);
const deliveryProperties = {
  id: { type: "string", pattern: "^dlv_[0-9a-f]{24}$" },
  endpointId: { type: "string", pattern: "^ep_[0-9a-f]{24}$" },
  eventId: { type: "string" },
  eventType: { type: "string" },
  status: deliveryStatus,
  attempts: { type: "integer", minimum: 0, maximum: 8, description: "Attempts in the current run (at most 8)." },
  attemptsTotal: { type: "integer", minimum: 0, description: "Attempts over all runs (redrives start new runs)." },
  nextAttemptAt: { ...nullableTimestamp, description: "When the next attempt is due; null when none is scheduled." },
  livemode: { type: "boolean", description: "False only for test deliveries." },
  lastStatusCode: { type: ["integer", "null"], description: "The receiver's status code on the latest attempt." },
  lastError: {
    type: ["string", "null"],
    description:
      "Why the latest attempt failed: non_2xx_status, redirect_not_followed, timeout, connection_error, tls_error, " +
      "target_not_allowed.",
  },
  createdAt: timestamp,
  updatedAt: timestamp,
};
const deliveryRequired = Object.keys(deliveryProperties);
const count = { type: "integer", minimum: 0 };

/** The webhook management schemas (routes.ts). */
export const webhookSchemas = {
  WebhookEndpointRequest: shapeSchema(newEndpointShape),
  WebhookEndpointUpdate: shapeSchema(endpointUpdateShape),
  WebhookEndpoint: {
    type: "object",
    description: "A webhook endpoint. Its signing secret is never part of it.",
    required: endpointRequired,
    additionalProperties: false,
    properties: endpointProperties,
  },
  WebhookEndpointWithSecret: {
    type: "object",
    description: "The endpoint and its signing secret: shown on creation and rotation only.",
    required: [...endpointRequired, "secret"],
    additionalProperties: false,
    properties: {
      ...endpointProperties,
      secret: {
        type: "string",
        pattern: "^whsec_[A-Za-z0-9]{44}$",
        description:
          "Verify `Service-Signature` and the Standard Webhooks headers (`webhook-signature`) with it. Store it now: it is not shown again.",
      },
    },
  },
  WebhookEndpointPage: {
    type: "object",
    required: ["data", "nextCursor"],
    properties: { data: { type: "array", description: "Newest first.", items: ref("WebhookEndpoint") }, nextCursor },
  },
  WebhookEventTypes: {
    type: "object",
    required: ["data", "currentApiVersion"],
    properties: {
      data: {
        type: "array",
        items: {
          type: "object",
          required: ["type", "description", "emission", "subscribable", "schema", "example"],
          additionalProperties: false,
          properties: {
            type: { type: "string" },
            description: { type: "string" },
            emission: { type: "string", enum: ["emitted", "delivery_not_established", "coming_soon"] },
            subscribable: { type: "boolean" },
            schema: {
              type: ["object", "null"],
              description:
                "The JSON Schema (draft 2020-12, `$schema` says so) of the type's whole envelope as delivered for " +
                "`currentApiVersion`: `id`, `type`, `api_version`, `occurred_at`, `tenant`, `livemode` and " +
                "`data.object` (the snapshot, no other fields). Null for a type that is not subscribable.",
            },
            example: {
              type: ["object", "null"],
              description:
                "An envelope of the type, valid against `schema`, keys in the order the body carries them; a test " +
                "delivery of the type carries its `data`. Null for a type that is not subscribable.",
            },
          },
        },
      },
      currentApiVersion: { type: "string" },
    },
  },
  WebhookDelivery: {
    type: "object",
    required: deliveryRequired,
    additionalProperties: false,
    properties: deliveryProperties,
  },
  WebhookDeliveryPage: {
    type: "object",
    required: ["data", "nextCursor"],
    properties: { data: { type: "array", description: "Newest first.", items: ref("WebhookDelivery") }, nextCursor },
  },
  WebhookDeliveryDetail: {
    type: "object",
    description: "The delivery, with `attemptHistory` and the exact `payload` sent.",
    required: [...deliveryRequired, "attemptHistory", "payload"],
    additionalProperties: false,
    properties: {
      ...deliveryProperties,
      attemptHistory: {
        type: "array",
        description: "Every attempt, oldest first.",
        items: {
          type: "object",
          required: [
            "number",
            "attemptedAt",
            "durationMs",
            "succeeded",
            "statusCode",
            "error",
            "responseBody",
            "responseBodyTruncated",
            "errorClass",
          ],
          additionalProperties: false,
          properties: {
            number: { type: "integer", minimum: 1, description: "Counting across runs." },
            attemptedAt: timestamp,
            durationMs: { type: "integer", minimum: 0 },
            succeeded: { type: "boolean" },
            statusCode: { type: ["integer", "null"] },
            error: { type: ["string", "null"], description: "As `lastError`." },
            responseBody: {
              type: "string",
              description: "The receiver's first 4 KiB as UTF-8 text (bytes that are not UTF-8 show as U+FFFD).",
            },
            responseBodyTruncated: { type: "boolean", description: "The answer was longer than 4 KiB." },
            errorClass: {
              type: ["string", "null"],
              enum: [...errorClasses, null],
              description:
                "The class of a failed attempt (`refused_target`: the address or port was refused; `http_3xx`: a " +
                "redirect, never followed); null on success.",
            },
          },
        },
      },
      payload: { type: "string", description: "The exact request body sent: the signed JSON envelope." },
    },
  },
  WebhookEndpointStats: {
    type: "object",
    required: [
      "endpointId",
      "windowStart",
      "windowEnd",
      "deliveries",
      "attempts",
      "attemptsSucceeded",
      "successRate",
      "latencyMs",
      "hourly",
    ],
    additionalProperties: false,
    properties: {
      endpointId: { type: "string" },
      windowStart: { ...timestamp, description: "The window is the last 24 hours." },
      windowEnd: timestamp,
      deliveries: {
        type: "object",
        description: "Deliveries created in the window, by current status.",
        required: ["pending", "succeeded", "awaitingRetry", "deadLettered", "held"],
        additionalProperties: false,
        properties: { pending: count, succeeded: count, awaitingRetry: count, deadLettered: count, held: count },
      },
      attempts: { ...count, description: "Attempts made in the window." },
      attemptsSucceeded: count,
      successRate: {
        type: ["number", "null"],
        minimum: 0,
        maximum: 1,
        description: "attemptsSucceeded / attempts; null when no attempt was made.",
      },
      latencyMs: {
        type: ["object", "null"],
        description: "Attempt duration percentiles in milliseconds; null when no attempt was made.",
        required: ["p50", "p95", "p99"],
        properties: { p50: { type: "number" }, p95: { type: "number" }, p99: { type: "number" } },
      },
      hourly: {
        type: "array",
        minItems: 24,
        maxItems: 24,
        description:
          "The window in 24 buckets of one hour, oldest first: bucket i covers [windowStart + i h, windowStart + " +
          "(i + 1) h); the last also holds windowEnd. Attempts made in it, by outcome.",
        items: {
          type: "object",
          required: ["start", "succeeded", "failed"],
          additionalProperties: false,
          properties: { start: timestamp, succeeded: count, failed: count },
        },
      },
    },
  },
  WebhookRecoveryRequest: shapeSchema(recoverShape),
  WebhookRecoveryDryRun: {
    type: "object",
    required: ["wouldRecover"],
    additionalProperties: false,
    properties: {
      wouldRecover: { ...count, description: "The failed and dead-lettered deliveries a recovery would redrive now." },
    },
  },
  WebhookRecovery: {
    type: "object",
    description:
      "A recovery: the endpoint's failed (`awaiting_retry`) and dead-lettered deliveries created in [since, until), " +
      "redriven one by one at the platform's recovery rate. Poll it until `state` is `completed` or `failed`.",
    required: [
      "id",
      "endpointId",
      "since",
      "until",
      "state",
      "total",
      "done",
      "redriven",
      "skipped",
      "failureCode",
      "actor",
      "createdAt",
      "startedAt",
      "finishedAt",
      "updatedAt",
    ],
    additionalProperties: false,
    properties: {
      id: { type: "string", pattern: "^rcv_[0-9a-f]{24}$" },
      endpointId: { type: "string", pattern: "^ep_[0-9a-f]{24}$" },
      since: timestamp,
      until: { ...nullableTimestamp, description: "Null: up to the moment the recovery was created." },
      state: { type: "string", enum: ["queued", "running", "completed", "failed"] },
      total: { ...count, description: "Deliveries the recovery covers, fixed at its creation." },
      done: { ...count, description: "Handled so far: redriven + skipped." },
      redriven: count,
      skipped: {
        ...count,
        description: "No longer redrivable when their turn came (they succeeded meanwhile, or left the retention).",
      },
      failureCode: {
        type: ["string", "null"],
        description: "Why a failed recovery stopped: `webhook.recovery_endpoint_deleted`.",
      },
      actor: { type: ["string", "null"], description: "Who asked for it, when the caller said (the console does)." },
      createdAt: timestamp,
      startedAt: nullableTimestamp,
      finishedAt: nullableTimestamp,
      updatedAt: timestamp,
    },
  },
  WebhookTestDeliveryRequest: shapeSchema(testDeliveryShape),
};

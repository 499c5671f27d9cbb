import { codesUsedAs } from "@platform/codes";
import { problemCodes, type ProblemCode } from "../problem.js";
import { problemCodesOf, TENANT_ID_PATTERN, type TenantRoute } from "../tenant-route.js";
import { tenantRoutes } from "../tenant-routes.js";
import { codeSchemas, errorsTag } from "./code-schemas.js";
import {
  documentContact,
  documentLicense,
  everyResponseHeaders,
  headersForStatus,
  responseHeaderComponents,
} from "./response-headers.js";

const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });

/** What each capability's tag says; a table of routes with a new tag adds a line here. */
const capabilities: Record<string, string> = {
  tenant: "The tenant record.",
  usage: "Monthly token usage and its caps.",
  activation:
    "Activation (provisioning, validation, live, or stalled with blocking reasons) and the capability report.",
  notifications: "Template messages to a customer's phone, and the customer's conversation transcript.",
  polls:
    "Poll-friendly reads of the tenant's state, projections of the event stream: the work ledger, the open " +
    "attention items and the activity feed. Send the last `ETag` as `If-None-Match`: 304 while nothing changed.",
  webhooks:
    "Signed webhook endpoints and their secrets, the event catalog, and the delivery ledger (inspect, redrive, " +
    "stats, test deliveries).",
};

/**
 * One problem response per status: the Problem shape with `code` limited to the codes this
 * operation can produce at this status, so an undeclared code fails validation.
 */
function problemResponse(status: number, codes: ProblemCode[]) {
  return {
    description: `Problem codes: ${codes.map((code) => `\`${code}\` (${problemCodes[code].title})`).join(", ")}.`,
    headers: { ...everyResponseHeaders, ...headersForStatus[status] },
    content: {
      "application/problem+json": {
        schema: {
          allOf: [ref("Problem"), { properties: { code: { enum: codes }, status: { const: status } } }],
        },
      },
    },
  };
}

/** koa-router `/api/v1/tenants/:tenantId/x` -> OpenAPI `/tenants/{tenantId}/x` under server /api/v1. */
const openApiPath = (path: string) => path.replace(/^\/api\/v1/, "").replace(/:([A-Za-z]+)/g, "{$1}");

/** A poll-friendly GET's request header (TenantRoute.poll). */
const ifNoneMatchParameter = {
  name: "If-None-Match",
  in: "header",
  required: false,
  description: "The `ETag` of the answer last seen: 304 with no body while the answer is the same.",
  schema: { type: "string", maxLength: 1024 },
};

/** A poll-friendly GET's response headers on 200 and 304. */
const pollHeaders = {
  ETag: {
    description: "Strong validator: a hash of the JSON body. Send it back as `If-None-Match`.",
    required: true,
    schema: { type: "string", pattern: '^"[A-Za-z0-9_-]{32}"$' },
  },
  "Cache-Control": {
    description: "`private, no-cache`: revalidate with If-None-Match before reusing a stored answer.",
    required: true,
    schema: { type: "string", const: "private, no-cache" },
  },
};

function operation(route: TenantRoute) {
  const parameters: unknown[] = [
    {
      name: "tenantId",
      in: "path",
      required: true,
      description: "1-64 of A-Z a-z 0-9 _ -; anything else is 400 `request.invalid` (checked after the scope).",
      schema: { type: "string", minLength: 1, maxLength: 64, pattern: TENANT_ID_PATTERN },
    },
    ...(route.parameters ?? []),
  ];
  if (route.mutation) {
    parameters.push({
      name: "Idempotency-Key",
      in: "header",
      required: true,
      description: "8-128 of A-Z a-z 0-9 _ . : -, bare or as a quoted sf-string. A repeat replays the first result.",
      schema: { type: "string", pattern: '^([A-Za-z0-9_.:-]{8,128}|"[A-Za-z0-9_.:-]{8,128}")$' },
    });
  }
  if (route.poll) parameters.push(ifNoneMatchParameter);
  const successStatus = route.successStatus ?? 200;
  const ok = {
    description: successStatus === 204 ? "Success; no body." : "Success.",
    headers: {
      ...everyResponseHeaders,
      ...(route.mutation
        ? {
            "Idempotent-Replayed": {
              description: "Present on a replay of an earlier request with the same Idempotency-Key.",
              schema: { type: "string", const: "true" },
            },
          }
        : {}),
      ...(route.poll ? pollHeaders : {}),
    },
    ...(route.responseSchema ? { content: { "application/json": { schema: ref(route.responseSchema) } } } : {}),
  };
  const byStatus = new Map<number, ProblemCode[]>();
  for (const code of problemCodesOf(route)) {
    const status = problemCodes[code].status;
    byStatus.set(status, [...(byStatus.get(status) ?? []), code]);
  }
  const responses: Record<string, unknown> = { [String(successStatus)]: ok };
  if (route.poll) {
    responses["304"] = {
      description: "Not modified: `If-None-Match` names the current ETag; no body.",
      headers: { ...everyResponseHeaders, ...pollHeaders },
    };
  }
  for (const status of [...byStatus.keys()].sort((a, b) => a - b)) {
    responses[String(status)] = problemResponse(status, byStatus.get(status)!);
  }
  return {
    operationId: route.operationId,
    tags: [route.tag],
    summary: route.summary,
    description: `${route.description} Needs the \`${route.scope}\` scope and a key granted this tenant.`,
    security: [{ bearerAuth: [route.scope] }],
    "x-required-scope": route.scope,
    parameters,
    ...(route.requestSchema
      ? { requestBody: { required: true, content: { "application/json": { schema: ref(route.requestSchema) } } } }
      : {}),
    responses,
  };
}

const timestamp = { type: "string", format: "date-time" };
const nullableTimestamp = { type: ["string", "null"], format: "date-time" };
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
const nextCursor = { type: ["string", "null"], description: "Pass back as `cursor`; null on the last page." };
const count = { type: "integer", minimum: 0 };

/** The webhook management schemas (webhook-routes.ts). */
const webhookSchemas = {
  WebhookEndpointRequest: {
    type: "object",
    required: ["url", "description", "eventTypes"],
    additionalProperties: false,
    properties: {
      url: {
        type: "string",
        maxLength: 2048,
        description:
          "An absolute https URL without credentials or fragment; its host must resolve to public addresses.",
      },
      description: { type: "string", description: "1-500 characters on one line." },
      eventTypes: {
        type: "array",
        minItems: 1,
        maxItems: 50,
        items: { type: "string" },
        description: "Exact subscribable event types or family wildcards such as `capability.*`.",
      },
    },
  },
  WebhookEndpointUpdate: {
    type: "object",
    description: "At least one of `url`, `description`, `eventTypes`.",
    additionalProperties: false,
    properties: {
      url: { type: "string", maxLength: 2048 },
      description: { type: "string" },
      eventTypes: { type: "array", minItems: 1, maxItems: 50, items: { type: "string" } },
      expectedVersion: {
        type: "integer",
        minimum: 1,
        description: "Apply only if the endpoint is still at this version; else 412 `webhook.version_mismatch`.",
      },
    },
  },
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
        pattern: "^whsec_[A-Za-z0-9_-]{43}$",
        description: "Verify `Service-Signature` with it. Store it now: it is not shown again.",
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
          required: ["type", "description", "emission", "subscribable"],
          additionalProperties: false,
          properties: {
            type: { type: "string" },
            description: { type: "string" },
            emission: { type: "string", enum: ["emitted", "delivery_not_established", "coming_soon"] },
            subscribable: { type: "boolean" },
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
            responseBodyTruncated: { type: "boolean" },
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
    },
  },
  WebhookTestDeliveryRequest: {
    type: "object",
    required: ["eventType"],
    additionalProperties: false,
    properties: { eventType: { type: "string", description: "Any subscribable event type of the catalog." } },
  },
};

const activationTimestamp = { type: "string", format: "date-time" };
const activationManifestProperties = {
  tenantId: { type: "string" },
  state: {
    type: "string",
    enum: ["provisioning", "validation", "live", "stalled"],
    description:
      "provisioning: activation not started; validation: waiting for the required capability checks; live: " +
      "activated; stalled: a capability check failed (see blockingReasons).",
  },
  steps: {
    type: "array",
    items: {
      type: "object",
      required: ["name", "state", "updatedAt"],
      additionalProperties: false,
      properties: {
        name: { type: "string", enum: ["provisioning", "validation", "live"] },
        state: { type: "string", enum: ["pending", "in_progress", "done", "failed"] },
        updatedAt: { type: ["string", "null"], format: "date-time" },
      },
    },
  },
  blockingReasons: {
    type: "array",
    items: {
      type: "object",
      required: ["code", "capability", "since"],
      additionalProperties: false,
      properties: {
        code: ref("BlockingReasonCode"),
        capability: { type: ["string", "null"] },
        since: activationTimestamp,
      },
    },
  },
  requiredCapabilities: { type: "array", items: { type: "string", pattern: "^[a-z][a-z0-9_]{0,63}$" } },
  version: { type: "integer", minimum: 1 },
  updatedAt: activationTimestamp,
};
const activationManifestRequired = [
  "tenantId",
  "state",
  "steps",
  "blockingReasons",
  "requiredCapabilities",
  "version",
  "updatedAt",
];
const activationSchemas = {
  ActivationManifest: {
    type: "object",
    required: activationManifestRequired,
    additionalProperties: false,
    properties: activationManifestProperties,
  },
  ActivationResult: {
    type: "object",
    required: [...activationManifestRequired, "idempotencyStatus"],
    additionalProperties: false,
    properties: {
      ...activationManifestProperties,
      idempotencyStatus: {
        type: "string",
        enum: ["Applied", "Replayed"],
        description: "Replayed: the answer of the first request with this Idempotency-Key.",
      },
    },
  },
  CapabilityReport: {
    type: "object",
    required: ["tenantId", "data"],
    additionalProperties: false,
    properties: {
      tenantId: { type: "string" },
      data: {
        type: "array",
        items: {
          type: "object",
          required: ["name", "state", "required", "lastResult", "lastCheckedAt", "reasonCode", "changedAt"],
          additionalProperties: false,
          properties: {
            name: { type: "string", pattern: "^[a-z][a-z0-9_]{0,63}$" },
            state: { type: "string", enum: ["on", "off", "unchecked"] },
            required: { type: "boolean", description: "Whether activation requires it." },
            lastResult: { type: ["string", "null"], enum: ["pass", "fail", null] },
            lastCheckedAt: { type: ["string", "null"], format: "date-time" },
            reasonCode: {
              type: ["string", "null"],
              enum: [...codesUsedAs("reasonCode").filter((code) => code.startsWith("capability.")), null],
              description: "The failing check's code; null when passing or unchecked.",
            },
            changedAt: { type: ["string", "null"], format: "date-time" },
          },
        },
      },
    },
  },
};

const pollPage = (item: string) => ({
  type: "object",
  additionalProperties: false,
  required: ["data", "nextCursor"],
  properties: { data: { type: "array", description: "Newest first.", items: ref(item) }, nextCursor },
});
const nullableCode = {
  type: ["string", "null"],
  description: "A code of the code catalogue (e.g. a failure code); null when none.",
};

/** The poll reads' schemas (poll-routes.ts). */
const pollSchemas = {
  WorkItem: {
    type: "object",
    additionalProperties: false,
    required: ["notificationId", "type", "state", "reasonCode", "createdAt", "updatedAt"],
    properties: {
      notificationId: { type: "string" },
      type: { type: "string", description: "The notification type, e.g. `reminder`." },
      state: { type: "string", enum: ["sent", "unknown", "failed"] },
      reasonCode: nullableCode,
      createdAt: timestamp,
      updatedAt: timestamp,
    },
  },
  WorkPage: pollPage("WorkItem"),
  AttentionItem: {
    type: "object",
    additionalProperties: false,
    required: ["id", "kind", "subjectId", "reasonCode", "openedAt", "eventId"],
    properties: {
      id: { type: "string", description: "Stable per item: `<kind>:<subjectId>`." },
      kind: { type: "string", enum: ["webhook_endpoint_dead_lettered", "escalation", "activation_stalled"] },
      subjectId: { type: "string", description: "The endpoint, escalation or tenant id." },
      reasonCode: nullableCode,
      openedAt: timestamp,
      eventId: { type: "string", description: "The event that opened the item." },
    },
  },
  AttentionPage: pollPage("AttentionItem"),
  ActivityItem: {
    type: "object",
    additionalProperties: false,
    required: ["eventId", "type", "occurredAt", "subjectKind", "subjectId", "reasonCode", "state"],
    properties: {
      eventId: { type: "string" },
      type: { type: "string", description: "The event type, e.g. `booking.created` or `notification.sent`." },
      occurredAt: timestamp,
      subjectKind: {
        type: ["string", "null"],
        description:
          "notification, webhook_endpoint, conversation, booking, escalation, capability, tenant or usage; " +
          "null for a type this version does not know.",
      },
      subjectId: { type: ["string", "null"] },
      reasonCode: nullableCode,
      state: { type: ["string", "null"], description: "The state the event names, e.g. `sent` or `live`." },
    },
  },
  ActivityPage: pollPage("ActivityItem"),
};

/** OpenAPI 3.1 document of the tenant interface (experimental), served at /api/v1/openapi.json. */
export function tenantOpenApi(options: { rateLimitPolicy: string }) {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const route of tenantRoutes) {
    (paths[openApiPath(route.path)] ??= {})[route.method.toLowerCase()] = operation(route);
  }
  const tags = [...new Set(tenantRoutes.map((route) => route.tag))];
  return {
    openapi: "3.1.0",
    info: {
      title: "Tenant interface (tenant-v1)",
      version: "1.0.0-experimental",
      description:
        "Every non-success is application/problem+json (RFC 9457); branch on `code`, and each operation lists " +
        "the codes it can answer with; the `Errors` tag documents every status and code with its meaning and " +
        "the client's reaction (schemas `ProblemCode`, `LastErrorCode`, `BlockingReasonCode`, `ReasonCode`). " +
        "Every response carries X-Request-Id and the RateLimit / RateLimit-Policy headers.",
      contact: documentContact,
      license: documentLicense,
    },
    servers: [{ url: "/api/v1" }],
    tags: [
      ...tags.map((name) => ({ name, ...(capabilities[name] ? { description: capabilities[name] } : {}) })),
      errorsTag,
    ],
    paths,
    components: {
      securitySchemes: { bearerAuth: { type: "http", scheme: "bearer" } },
      headers: responseHeaderComponents(options.rateLimitPolicy),
      schemas: {
        ...pollSchemas,
        Tenant: {
          type: "object",
          required: ["id", "name", "status", "activated", "channelReady", "version", "lastErrorCode", "plan"],
          properties: {
            id: { type: "string" },
            name: { type: "string" },
            status: { type: "string", enum: ["pending_activation", "active"] },
            activated: { type: "boolean" },
            channelReady: { type: "boolean" },
            version: { type: "integer", minimum: 1 },
            lastErrorCode: {
              description: "A stable partner-safe code (see `LastErrorCode`), or null.",
              anyOf: [ref("LastErrorCode"), { type: "null" }],
            },
            plan: { type: "string", enum: ["testing", "commercial"] },
            createdAt: { type: "string", format: "date-time" },
            activationState: {
              type: ["string", "null"],
              enum: ["provisioning", "validation", "live", "stalled", null],
              description: "Where activation stands; GET /activation has the details.",
            },
          },
        },
        ...activationSchemas,
        UsageLimitsRequest: {
          type: "object",
          required: ["softCap", "hardCap"],
          description:
            "`softCap` must not be greater than `hardCap`. With `expectedVersion` the change applies only when it " +
            "is the limits' current `version` (0: never set); otherwise 412 usage.version_mismatch.",
          properties: {
            softCap: { type: "integer", minimum: 0, maximum: 9007199254740991 },
            hardCap: { type: "integer", minimum: 0, maximum: 9007199254740991 },
            expectedVersion: { type: "integer", minimum: 0, maximum: 9007199254740991 },
          },
        },
        UsageLimits: {
          type: "object",
          required: ["tenantId", "softCap", "hardCap", "version", "updatedAt"],
          properties: {
            tenantId: { type: "string" },
            softCap: { type: "integer", minimum: 0, maximum: 9007199254740991 },
            hardCap: { type: "integer", minimum: 0, maximum: 9007199254740991 },
            version: { type: "integer", minimum: 1 },
            updatedAt: { type: "string", format: "date-time" },
          },
        },
        UnsetUsageLimits: {
          type: "object",
          description: "The tenant never set limits: no caps apply.",
          required: ["tenantId", "softCap", "hardCap", "version", "updatedAt"],
          properties: {
            tenantId: { type: "string" },
            softCap: { type: "null" },
            hardCap: { type: "null" },
            version: { const: 0 },
            updatedAt: { type: "null" },
          },
        },
        CurrentUsageLimits: { oneOf: [ref("UsageLimits"), ref("UnsetUsageLimits")] },
        UsageThresholdCrossing: {
          type: "object",
          description:
            "A cap reached this month (at most once per cap and UTC month); the usage.threshold_crossed event " +
            "`eventId` announced it.",
          required: ["threshold", "cap", "tokensUsed", "crossedAt", "eventId"],
          additionalProperties: false,
          properties: {
            threshold: { type: "string", enum: ["soft_cap", "hard_cap"] },
            cap: { type: "integer", minimum: 0, maximum: 9007199254740991 },
            tokensUsed: { type: "integer", minimum: 0, maximum: 9007199254740991 },
            crossedAt: { type: "string", format: "date-time" },
            eventId: { type: "string", pattern: "^evt_[0-9a-f]{24}$" },
          },
        },
        Usage: {
          type: "object",
          description:
            "Token usage of the current UTC calendar month. `softCap` and `hardCap` are null (and `limitsVersion` " +
            "0) when the tenant never set limits.",
          required: ["tenantId", "month", "unit", "tokensUsed", "softCap", "hardCap", "limitsVersion", "thresholds"],
          additionalProperties: false,
          properties: {
            tenantId: { type: "string" },
            month: { type: "string", pattern: "^[0-9]{4}-(0[1-9]|1[0-2])$", description: "YYYY-MM, UTC" },
            unit: { const: "tokens" },
            tokensUsed: { type: "integer", minimum: 0, maximum: 9007199254740991 },
            softCap: { type: ["integer", "null"], minimum: 0, maximum: 9007199254740991 },
            hardCap: { type: ["integer", "null"], minimum: 0, maximum: 9007199254740991 },
            limitsVersion: { type: "integer", minimum: 0 },
            thresholds: { type: "array", maxItems: 2, items: ref("UsageThresholdCrossing") },
          },
        },
        NotificationRequest: {
          type: "object",
          description:
            "Required template fields per type: reminder (clientName, businessName, serviceName, when), no_show " +
            "(clientName, serviceName), cancelled (clientName, serviceName, when), rescheduled (clientName, " +
            "serviceName, when, newWhen), update (clientName, businessName, message). Each field is collapsed to one " +
            "line before rendering. Retired types and message keys, retired fields (paymentUrl, feeAmount), " +
            "scheduling fields (sendAt, scheduledAt, deliveryMode, ...) and any other member are refused with 400 " +
            "partner.notification_invalid.",
          required: ["to", "type", "actor"],
          additionalProperties: false,
          properties: {
            to: {
              type: "string",
              pattern: "^\\+?[0-9]{8,15}$",
              description: "International format, 8-15 digits, optional leading +",
            },
            type: { type: "string", enum: ["reminder", "no_show", "cancelled", "rescheduled", "update"] },
            clientName: { $ref: "#/components/schemas/TemplateField" },
            businessName: { $ref: "#/components/schemas/TemplateField" },
            serviceName: { $ref: "#/components/schemas/TemplateField" },
            when: { $ref: "#/components/schemas/TemplateField" },
            newWhen: { $ref: "#/components/schemas/TemplateField" },
            message: { $ref: "#/components/schemas/TemplateField" },
            actor: {
              type: "object",
              required: ["actorReference"],
              additionalProperties: false,
              properties: {
                actorReference: { type: "string", minLength: 1, maxLength: 300 },
                delegationReference: { type: ["string", "null"], maxLength: 300 },
              },
            },
          },
        },
        TemplateField: {
          type: "string",
          maxLength: 300,
          description: "At most 300 characters (Unicode code points).",
        },
        NotificationResult: {
          type: "object",
          required: ["notificationId", "state", "type", "createdAt", "idempotencyStatus"],
          properties: {
            notificationId: { type: "string", pattern: "^ntf_[0-9a-f]{24}$" },
            state: {
              type: "string",
              const: "sent",
              description: "sent: the channel accepted the message. Not proof that the recipient read it.",
            },
            type: { type: "string" },
            createdAt: { type: "string", format: "date-time" },
            idempotencyStatus: { type: "string", enum: ["applied", "replayed"] },
          },
        },
        ConversationMessages: {
          type: "object",
          required: ["messages", "nextCursor"],
          properties: {
            messages: {
              type: "array",
              description: "Newest first.",
              items: {
                type: "object",
                required: ["id", "notificationId", "type", "text", "state", "actor", "createdAt", "updatedAt"],
                properties: {
                  id: { type: "string", pattern: "^msg_[0-9a-f]{24}$" },
                  notificationId: { type: "string", pattern: "^ntf_[0-9a-f]{24}$" },
                  type: { type: "string" },
                  text: { type: "string", description: "The rendered text, as sent to the customer." },
                  state: {
                    type: "string",
                    enum: ["sent", "unknown", "failed"],
                    description: "unknown: the channel's answer was lost; the message may or may not have gone out.",
                  },
                  actor: {
                    type: "object",
                    required: ["actorReference", "delegationReference"],
                    properties: {
                      actorReference: { type: "string" },
                      delegationReference: { type: ["string", "null"] },
                    },
                  },
                  createdAt: { type: "string", format: "date-time" },
                  updatedAt: { type: "string", format: "date-time" },
                },
              },
            },
            nextCursor: { type: ["string", "null"], description: "Pass back as `cursor`; null on the last page." },
          },
        },
        ...webhookSchemas,
        ...codeSchemas(),
        Problem: {
          type: "object",
          required: ["type", "title", "status", "detail", "code", "correlationId"],
          properties: {
            type: { type: "string", format: "uri" },
            title: { type: "string" },
            status: { type: "integer", minimum: 400, maximum: 599 },
            detail: { type: "string" },
            code: ref("ProblemCode"),
            correlationId: { type: "string", pattern: "^[A-Za-z0-9._:-]{1,128}$" },
          },
        },
      },
    },
  };
}

import { notificationRoutes } from "../notification-routes.js";
import { problemCodes } from "../problem.js";
import { tenantRoutes } from "../tenant-routes.js";

const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });
const commonHeaders = {
  "X-Request-Id": { $ref: "#/components/headers/X-Request-Id" },
  RateLimit: { $ref: "#/components/headers/RateLimit" },
  "RateLimit-Policy": { $ref: "#/components/headers/RateLimit-Policy" },
};

function problemResponse(status: number, extraHeaders: Record<string, unknown> = {}) {
  const codes = Object.entries(problemCodes)
    .filter(([, p]) => p.status === status)
    .map(([code]) => `\`${code}\``);
  return {
    description: `Problem codes: ${codes.join(", ")}`,
    headers: { ...commonHeaders, ...extraHeaders },
    content: { "application/problem+json": { schema: ref("Problem") } },
  };
}

const retryAfter = { "Retry-After": { schema: { type: "string", pattern: "^[0-9]+$" } } };

/** koa-router `/api/v1/tenants/:tenantId/x` -> OpenAPI `/tenants/{tenantId}/x` under server /api/v1. */
const openApiPath = (path: string) => path.replace(/^\/api\/v1/, "").replace(/:([A-Za-z]+)/g, "{$1}");

function operation(route: (typeof tenantRoutes)[number]) {
  const parameters: unknown[] = [
    { name: "tenantId", in: "path", required: true, schema: { type: "string", maxLength: 64 } },
  ];
  parameters.push(...(route.parameters ?? []));
  if (route.mutation) {
    parameters.push({
      name: "Idempotency-Key",
      in: "header",
      required: true,
      description: "8-128 of A-Z a-z 0-9 _ . : -, bare or as a quoted sf-string. A repeat replays the first result.",
      schema: { type: "string" },
    });
  }
  const ok = {
    description: "Success.",
    headers: {
      ...commonHeaders,
      ...(route.mutation
        ? { "Idempotent-Replayed": { schema: { const: "true" }, description: "present on a replay" } }
        : {}),
    },
    content: { "application/json": { schema: ref(route.responseSchema) } },
  };
  const responses: Record<string, unknown> = {
    "200": ok,
    "400": problemResponse(400),
    "401": problemResponse(401),
    "403": problemResponse(403),
    "404": problemResponse(404),
    "405": problemResponse(405),
    "429": problemResponse(429, retryAfter),
    "500": problemResponse(500),
    "503": problemResponse(503, retryAfter),
  };
  if (route.mutation) {
    Object.assign(responses, {
      "409": problemResponse(409),
      "413": problemResponse(413),
      "415": problemResponse(415),
      "422": problemResponse(422),
    });
  }
  return {
    operationId: route.operationId,
    summary: route.summary,
    security: [{ bearerAuth: [route.scope] }],
    "x-required-scope": route.scope,
    parameters,
    ...(route.requestSchema
      ? { requestBody: { required: true, content: { "application/json": { schema: ref(route.requestSchema) } } } }
      : {}),
    responses,
  };
}

const paths: Record<string, Record<string, unknown>> = {};
for (const route of [...tenantRoutes, ...notificationRoutes]) {
  (paths[openApiPath(route.path)] ??= {})[route.method.toLowerCase()] = operation(route);
}

/** OpenAPI 3.1 document of the tenant interface (experimental), served at /api/v1/openapi.json. */
export const tenantOpenApi = {
  openapi: "3.1.0",
  info: {
    title: "Tenant interface (tenant-v1)",
    version: "1.0.0-experimental",
    description:
      "Every non-success is application/problem+json (RFC 9457); branch on `code`. Every response carries " +
      "X-Request-Id and the RateLimit / RateLimit-Policy headers.",
  },
  servers: [{ url: "/api/v1" }],
  paths,
  components: {
    securitySchemes: { bearerAuth: { type: "http", scheme: "bearer" } },
    headers: {
      "X-Request-Id": { schema: { type: "string", pattern: "^[A-Za-z0-9._:-]{1,128}$" } },
      RateLimit: { schema: { type: "string", pattern: '^"default";r=[0-9]+;t=[0-9]+$' } },
      "RateLimit-Policy": { schema: { type: "string", pattern: '^"default";q=[0-9]+;w=1$' } },
    },
    schemas: {
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
          lastErrorCode: { type: ["string", "null"], description: "a stable partner-safe code, or null" },
          plan: { type: "string", enum: ["testing", "commercial"] },
          createdAt: { type: "string", format: "date-time" },
        },
      },
      UsageLimitsRequest: {
        type: "object",
        required: ["softCap", "hardCap"],
        properties: {
          softCap: { type: "integer", minimum: 0, maximum: 9007199254740991 },
          hardCap: { type: "integer", minimum: 0, maximum: 9007199254740991 },
        },
      },
      UsageLimits: {
        type: "object",
        required: ["tenantId", "softCap", "hardCap", "version", "updatedAt"],
        properties: {
          tenantId: { type: "string" },
          softCap: { type: "integer", minimum: 0 },
          hardCap: { type: "integer", minimum: 0 },
          version: { type: "integer", minimum: 1 },
          updatedAt: { type: "string", format: "date-time" },
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
      Problem: {
        type: "object",
        required: ["type", "title", "status", "detail", "code", "correlationId"],
        properties: {
          type: { type: "string", format: "uri" },
          title: { type: "string" },
          status: { type: "integer", minimum: 400, maximum: 599 },
          detail: { type: "string" },
          code: { type: "string", enum: Object.keys(problemCodes) },
          correlationId: { type: "string", pattern: "^[A-Za-z0-9._:-]{1,128}$" },
        },
      },
    },
  },
};

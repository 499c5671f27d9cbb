import { problemCodes, type ProblemCode } from "../problem.js";
import { problemCodesOf, TENANT_ID_PATTERN, type TenantRoute } from "../tenant-route.js";
import { tenantRoutes } from "../tenant-routes.js";
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
  notifications: "Template messages to a customer's phone, and the customer's conversation transcript.",
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
  const ok = {
    description: "Success.",
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
    },
    content: { "application/json": { schema: ref(route.responseSchema) } },
  };
  const byStatus = new Map<number, ProblemCode[]>();
  for (const code of problemCodesOf(route)) {
    const status = problemCodes[code].status;
    byStatus.set(status, [...(byStatus.get(status) ?? []), code]);
  }
  const responses: Record<string, unknown> = { "200": ok };
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
        "the codes it can answer with. Every response carries X-Request-Id and the RateLimit / " +
        "RateLimit-Policy headers.",
      contact: documentContact,
      license: documentLicense,
    },
    servers: [{ url: "/api/v1" }],
    tags: tags.map((name) => ({ name, ...(capabilities[name] ? { description: capabilities[name] } : {}) })),
    paths,
    components: {
      securitySchemes: { bearerAuth: { type: "http", scheme: "bearer" } },
      headers: responseHeaderComponents(options.rateLimitPolicy),
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
          description: "`softCap` must not be greater than `hardCap`.",
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
}

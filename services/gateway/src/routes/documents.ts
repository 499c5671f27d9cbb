import { catalogCodeForStatus } from "../http/catalog-error.js";
import { catalogOperation } from "../http/openapi/catalog-operation.js";
import { codeSchemas, errorsTag } from "../http/openapi/code-schemas.js";
import { openApiDocument } from "../http/openapi/document.js";
import { responseHeaderComponents } from "../http/openapi/response-headers.js";
import { problemSchema, tenantOperation } from "../http/openapi/tenant-operation.js";
import { activationSchemas } from "./activation/schemas.js";
import { catalogHeaderComponents, catalogSchemas } from "./catalog/schemas.js";
import { consoleSchemas } from "./console/schemas.js";
import { catalogRoutes, tenantRoutes } from "./index.js";
import { notificationSchemas } from "./notifications/schemas.js";
import { pollSchemas } from "./polls/schemas.js";
import { tenantSchemas } from "./tenant/schemas.js";
import { channelSchemas } from "./channel/schemas.js";
import { usageSchemas } from "./usage/schemas.js";
import { webhookSchemas } from "./webhooks/schemas.js";

interface DocumentOptions {
  rateLimitPolicy: string;
}

/** OpenAPI 3.1 document of the animal interface, served at /v1/openapi.json. */
export function catalogOpenApi(options: DocumentOptions) {
  return openApiDocument(catalogRoutes, {
    title: "Animal catalog",
    version: "1.0.0",
    description:
      "Lists, adds and retrieves animals. All operations need `Authorization: Bearer <API key>`; any active " +
      "key may use the catalog. Every response carries X-Request-Id, RateLimit and RateLimit-Policy. " +
      "Errors use the Error shape; its `code` is one per status: " +
      Object.entries(catalogCodeForStatus)
        .map(([status, code]) => `${status} \`${code}\``)
        .join(", ") +
      ".",
    server: "/v1",
    security: [{ bearerAuth: [] }],
    tags: [{ name: "pets", description: "The animal catalog." }],
    operation: catalogOperation,
    headers: { ...responseHeaderComponents(options.rateLimitPolicy), ...catalogHeaderComponents },
    schemas: catalogSchemas,
  });
}

/** What each capability's tag says; a table of routes with a new tag adds a line here. */
const capabilities: Record<string, string> = {
  tenant: "The tenant record.",
  channel:
    "The tenant's own WhatsApp number: its Business Account, phone number id, sealed access token, templates, " +
    "throughput and STOP / START keywords; the number's status and quality rating as last checked.",
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
  console:
    "Console links: a partner's backend signs one of the tenant's console users into the console (webhook " +
    "management for owners and admins) from its own product, with a short-lived, single-use URL.",
};

const tenantTags = () =>
  [...new Set(tenantRoutes.map((route) => route.tag))].map((name) => ({
    name,
    ...(capabilities[name] ? { description: capabilities[name] } : {}),
  }));

/** OpenAPI 3.1 document of the tenant interface (experimental), served at /api/v1/openapi.json. */
export function tenantOpenApi(options: DocumentOptions) {
  return openApiDocument(tenantRoutes, {
    title: "Tenant interface (tenant-v1)",
    version: "1.0.0-experimental",
    description:
      "Every non-success is application/problem+json (RFC 9457); branch on `code`, and each operation lists " +
      "the codes it can answer with; the `Errors` tag documents every status and code with its meaning and " +
      "the client's reaction (schemas `ProblemCode`, `LastErrorCode`, `BlockingReasonCode`, `ReasonCode`). " +
      "Every response carries X-Request-Id and the RateLimit / RateLimit-Policy headers.",
    server: "/api/v1",
    tags: [...tenantTags(), errorsTag],
    operation: tenantOperation,
    headers: responseHeaderComponents(options.rateLimitPolicy),
    schemas: {
      ...pollSchemas,
      ...tenantSchemas,
      ...channelSchemas,
      ...activationSchemas,
      ...usageSchemas,
      ...notificationSchemas,
      ...webhookSchemas,
      ...consoleSchemas,
      ...codeSchemas(),
      Problem: problemSchema,
    },
  });
}

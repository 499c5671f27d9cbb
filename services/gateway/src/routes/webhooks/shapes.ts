import type { Context } from "koa";
import type { UpdateEndpointRequest } from "@platform/proto/webhooks/v1";
import { z } from "zod";
import { ApiError } from "../../http/api-error.js";
import { mustBe, parseShape } from "../../http/request-shape.js";
import { invalidQuery, pageQueryShape } from "../../http/page-query.js";
import { fromText, parseQuery } from "../../http/query-shape.js";

const endpointInvalid = (detail: string) => new ApiError(400, detail, { code: "webhook.endpoint_invalid" });
const requestInvalid = (detail: string) => new ApiError(400, detail, { code: "request.invalid" });

/** A request body: a JSON object without unknown members. */
const body = <Shape extends z.ZodRawShape>(shape: Shape, description?: string) =>
  z.strictObject(shape, { error: "the request body must be a JSON object" }).meta(description ? { description } : {});

const URL_BOUNDS = { maxLength: 2048 };
const EVENT_TYPES_BOUNDS = { minItems: 1, maxItems: 50 };
const eventTypes = (meta: Record<string, unknown>) =>
  z
    .array(z.string(mustBe("an array of strings")), mustBe("an array of strings"))
    .meta({ ...EVENT_TYPES_BOUNDS, ...meta });
const text = (meta: Record<string, unknown> = {}) => z.string(mustBe("a string")).meta(meta);
const RATE_LIMIT_PROBLEM = "must be an integer from 1 to 10000 (deliveries per second), or null";
/** Checked here too: a value past int32 must not reach the service's proto. */
const rateLimit = (description: string) =>
  z
    .int(mustBe("an integer from 1 to 10000 (deliveries per second), or null"))
    .min(1, RATE_LIMIT_PROBLEM)
    .max(10_000, RATE_LIMIT_PROBLEM)
    .nullable()
    .meta({ description })
    .optional();

/**
 * `{"url", "description", "eventTypes": [...]}`, all three required. Their values are the
 * service's to judge: the URL and list bounds are documented, not checked here.
 */
export const newEndpointShape = body({
  url: text({
    ...URL_BOUNDS,
    description: "An absolute https URL without credentials or fragment; its host must resolve to public addresses.",
  }),
  description: text({ description: "1-500 characters on one line." }),
  eventTypes: eventTypes({ description: "Exact subscribable event types or family wildcards such as `capability.*`." }),
  rateLimit: rateLimit(
    "Deliveries per second to this endpoint, from all our delivery processes together (1-10000); absent or null: " +
      "unlimited. Deliveries above it wait their turn; waiting is not an attempt.",
  ),
});

/** `{"url"?, "description"?, "eventTypes"?, "expectedVersion"?}` (PATCH). */
export const endpointUpdateShape = body(
  {
    url: text(URL_BOUNDS).optional(),
    description: text().optional(),
    eventTypes: eventTypes({}).optional(),
    rateLimit: rateLimit("A new rate limit, deliveries per second (1-10000); null removes it."),
    expectedVersion: z
      .int(mustBe("a positive integer (the endpoint's version)"))
      .min(1, "must be a positive integer (the endpoint's version)")
      .meta({
        description: "Apply only if the endpoint is still at this version; else 412 `webhook.version_mismatch`.",
      })
      .optional(),
  },
  "At least one of `url`, `description`, `eventTypes`, `rateLimit`.",
);

/** `{"eventType": "..."}` of a test delivery. */
export const testDeliveryShape = body({
  eventType: text({ description: "Any subscribable event type of the catalog." }),
});

/** `{"since", "until"?, "dryRun"?}` of a recover; the window's rules are the service's. */
export const recoverShape = body({
  since: text({
    description:
      "RFC 3339 with a zone. Deliveries created at or after it are recovered; not in the future, not older than " +
      "the 30-day retention.",
  }),
  until: text({
    description: "RFC 3339 with a zone, after `since`; deliveries created before it. Default: now.",
  }).optional(),
  dryRun: z
    .boolean(mustBe("a boolean"))
    .meta({ description: "Only count: answers 200 `{wouldRecover}` and starts nothing." })
    .optional(),
});

export function parseRecover(input: unknown): { since: string; until: string | undefined; dryRun: boolean } {
  const { since, until, dryRun } = parseShape(recoverShape, input, requestInvalid);
  return { since, until, dryRun: dryRun ?? false };
}

export function parseNewEndpoint(input: unknown): {
  url: string;
  description: string;
  eventTypes: string[];
  rateLimit: number | undefined;
} {
  const { rateLimit, ...endpoint } = parseShape(newEndpointShape, input, endpointInvalid);
  return { ...endpoint, rateLimit: rateLimit ?? undefined };
}

export function parseEndpointUpdate(
  input: unknown,
): Pick<
  UpdateEndpointRequest,
  "url" | "description" | "eventTypes" | "expectedVersion" | "rateLimit" | "clearRateLimit"
> {
  const { url, description, eventTypes, rateLimit, expectedVersion } = parseShape(
    endpointUpdateShape,
    input,
    endpointInvalid,
  );
  return {
    url,
    description,
    eventTypes: eventTypes === undefined ? undefined : { eventTypes },
    rateLimit: rateLimit ?? undefined,
    clearRateLimit: rateLimit === null ? true : undefined,
    expectedVersion: expectedVersion === undefined ? undefined : String(expectedVersion),
  };
}

export function parseTestDelivery(input: unknown): string {
  return parseShape(testDeliveryShape, input, requestInvalid).eventType;
}

const VERSION_PROBLEM = "must be a positive integer (the endpoint's version)";

/** The optional `expectedVersion` query of delete, pause, resume and rotate. */
export const expectedVersionQueryShape = z.object({
  expectedVersion: fromText(
    /^[1-9][0-9]{0,14}$/,
    z.int({ error: VERSION_PROBLEM }).min(1, VERSION_PROBLEM).meta({
      description: "The endpoint's `version` as last read; when it has changed since, 412 `webhook.version_mismatch`.",
    }),
  ).optional(),
});

export function expectedVersionQuery(ctx: Context): string | undefined {
  const { expectedVersion } = parseQuery(ctx, expectedVersionQueryShape, invalidQuery);
  return expectedVersion === undefined ? undefined : String(expectedVersion);
}

/** The delivery states a ledger query may filter by. */
export const deliveryStatuses = ["pending", "succeeded", "awaiting_retry", "dead_lettered", "held"] as const;

/**
 * A ledger page, optionally one `status`, one exact `eventType` and one `eventId` (an empty one
 * filters nothing).
 */
export const deliveryQueryShape = pageQueryShape.extend({
  status: z.preprocess(
    (value) => (value === "" ? undefined : value),
    z.enum(deliveryStatuses, { error: `must be one of ${deliveryStatuses.join(", ")}` }).optional(),
  ),
  eventType: z.string().meta({ maxLength: 200 }).optional(),
  eventId: z
    .string()
    .meta({ maxLength: 200, description: "Only the delivery of this event (the envelope's `id`)." })
    .optional(),
});

const RFC3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:\d{2})$/i;
const instant = (description: string) =>
  z
    .string()
    .regex(RFC3339, "must be an RFC 3339 timestamp with a zone, e.g. 2026-07-01T10:00:00Z")
    .refine((text) => !Number.isNaN(new Date(text).getTime()), "must be a valid timestamp")
    .meta({ format: "date-time", description })
    .optional();

/**
 * The message log's query: a ledger page across the tenant's endpoints, and a creation window
 * [`createdAfter`, `createdBefore`).
 */
export const messageLogQueryShape = deliveryQueryShape.extend({
  createdAfter: instant("RFC 3339 with a zone: only deliveries created at or after it."),
  createdBefore: instant("RFC 3339 with a zone: only deliveries created before it (after `createdAfter`)."),
});

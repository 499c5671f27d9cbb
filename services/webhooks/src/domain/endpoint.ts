/**
 * A webhook endpoint as a partner creates and updates it (spec 2.5): an https URL, a description,
 * event filters, and the payload version pinned at creation. Validation names every problem at
 * once, each with a stable code. Whether the URL's host resolves to a public address is checked
 * by the delivery side (it needs DNS), not here.
 */
import type { CatalogueCode } from "@platform/codes";
import { DomainError, InvalidArgumentError, NotFoundError } from "@platform/service-kit/errors";
import { eventFilterProblems, type EventFilterProblemCode } from "./event-catalog.js";

/** The payload schema version new endpoints are pinned to (spec 9). */
export const currentApiVersion = "2026-07-01";

/**
 * A dead-letter paused the endpoint: its attention reason, and the type and the reason_code of the
 * internal fact that tells the tenant projections (one catalogue code for all three).
 */
export const ENDPOINT_DEAD_LETTERED = "webhook.endpoint_dead_lettered" satisfies CatalogueCode;
/** The type of the internal fact that an endpoint a dead-letter paused was resumed. */
export const ENDPOINT_RESUMED = "webhook.endpoint_resumed";
/** The types of the internal facts that a recovery of the endpoint began and ended (activity feed). */
export const ENDPOINT_RECOVERY_STARTED = "webhook.endpoint_recovery_started";
export const ENDPOINT_RECOVERY_FINISHED = "webhook.endpoint_recovery_finished";
/**
 * The internal facts of the other console and API actions, one per action (with the actor when
 * the caller named one): the tenant's activity feed. ResumeEndpoint announces ENDPOINT_RESUMED.
 */
export const endpointActionTypes = {
  created: "webhook.endpoint_created",
  updated: "webhook.endpoint_updated",
  deleted: "webhook.endpoint_deleted",
  paused: "webhook.endpoint_paused",
  secretRotated: "webhook.endpoint_secret_rotated",
  deliveryRedriven: "webhook.delivery_redriven",
  testDeliverySent: "webhook.test_delivery_sent",
} as const;
export type EndpointActionType = (typeof endpointActionTypes)[keyof typeof endpointActionTypes];

export const maxUrlLength = 2048;
export const maxDescriptionLength = 500;
/** The bounds of an endpoint's rate limit, deliveries per second (docs/webhooks.md "Rate limits per endpoint"). */
export const minRateLimit = 1;
export const maxRateLimit = 10_000;

export type EndpointProblemCode =
  | "webhook.url_invalid"
  | "webhook.url_not_https"
  | "webhook.url_has_credentials"
  | "webhook.url_has_fragment"
  | "webhook.description_invalid"
  | "webhook.update_empty"
  | "webhook.endpoint_invalid"
  | EventFilterProblemCode;

export interface EndpointProblem {
  code: EndpointProblemCode;
  /** The request field at fault: `url`, `description`, `eventTypes` or `rateLimit`. */
  field: "url" | "description" | "eventTypes" | "rateLimit" | null;
  message: string;
}

/** Refused endpoint input; `problems` names every one. */
export class InvalidEndpointError extends InvalidArgumentError {
  override name = "InvalidEndpointError";
  constructor(readonly problems: readonly EndpointProblem[]) {
    super("webhook.endpoint_invalid", problems.map((problem) => problem.message).join("; "));
  }
}

/**
 * The code a partner branches on for a refused endpoint: when every problem is an unknown (or
 * every one a coming-soon) event filter, that specific code; otherwise `webhook.endpoint_invalid`.
 * The message still names every problem.
 */
export function endpointRefusal(error: InvalidEndpointError): InvalidArgumentError {
  const codes = new Set(error.problems.map((problem) => problem.code));
  const [only] = codes;
  if (codes.size === 1 && (only === "webhook.event_type_unknown" || only === "webhook.event_type_not_subscribable")) {
    return new InvalidArgumentError(only, error.message);
  }
  return error;
}

/** No endpoint with this id belongs to the tenant (or it was deleted): nothing more is revealed. */
export class EndpointNotFoundError extends NotFoundError {
  override name = "EndpointNotFoundError";
  constructor() {
    super("webhook.endpoint_not_found", "no webhook endpoint with this id");
  }
}

/** `expectedVersion` no longer matches the endpoint's `version` (the gateway answers 412). */
export class EndpointVersionMismatchError extends DomainError {
  override name = "EndpointVersionMismatchError";
  constructor(
    readonly expectedVersion: number,
    readonly currentVersion: number,
  ) {
    super(
      "failed_precondition",
      "webhook.version_mismatch",
      `expectedVersion ${expectedVersion} does not match the endpoint's version ${currentVersion}`,
    );
  }
}

export interface NewEndpointInput {
  url: string;
  description: string;
  eventTypes: readonly string[];
  /** Deliveries per second; undefined: unlimited. */
  rateLimit?: number;
}

export interface NewEndpoint {
  url: string;
  description: string;
  eventTypes: string[];
  apiVersion: string;
  /** Deliveries per second from every replica together; null: unlimited. */
  rateLimit: number | null;
}

export interface EndpointUpdateInput {
  url?: string;
  description?: string;
  eventTypes?: readonly string[];
  /** A new limit, null to remove it; undefined: unchanged. */
  rateLimit?: number | null;
}

export type EndpointChanges = Partial<Pick<NewEndpoint, "url" | "description" | "eventTypes" | "rateLimit">>;

function rateLimitProblems(rateLimit: number): EndpointProblem[] {
  if (Number.isInteger(rateLimit) && rateLimit >= minRateLimit && rateLimit <= maxRateLimit) return [];
  return [
    {
      code: "webhook.endpoint_invalid",
      field: "rateLimit",
      message: `rateLimit must be an integer from ${minRateLimit} to ${maxRateLimit} (deliveries per second), or null`,
    },
  ];
}

function urlProblems(url: string): { url?: string; problems: EndpointProblem[] } {
  const problem = (code: EndpointProblemCode, message: string) => ({
    problems: [{ code, field: "url" as const, message }],
  });
  if (url.length > maxUrlLength)
    return problem("webhook.url_invalid", `url must be at most ${maxUrlLength} characters`);
  if (url !== url.trim()) return problem("webhook.url_invalid", "url must not have leading or trailing spaces");
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return problem("webhook.url_invalid", "url is not an absolute URL");
  }
  const problems: EndpointProblem[] = [];
  if (parsed.protocol !== "https:") {
    problems.push({ code: "webhook.url_not_https", field: "url", message: "url must use https" });
  }
  if (parsed.username !== "" || parsed.password !== "") {
    problems.push({ code: "webhook.url_has_credentials", field: "url", message: "url must not carry credentials" });
  }
  // `https://x/#` parses to an empty hash, so look at the text too.
  if (parsed.hash !== "" || url.includes("#")) {
    problems.push({ code: "webhook.url_has_fragment", field: "url", message: "url must not have a fragment" });
  }
  if (problems.length === 0 && parsed.hostname === "") {
    problems.push({ code: "webhook.url_invalid", field: "url", message: "url must name a host" });
  }
  return problems.length > 0 ? { problems } : { url: parsed.href, problems };
}

function descriptionProblems(description: string): { description?: string; problems: EndpointProblem[] } {
  const trimmed = description.trim();
  const length = [...trimmed].length;
  // Control characters (newlines included) make a description that cannot be shown on one line.
  // eslint-disable-next-line no-control-regex
  if (length === 0 || length > maxDescriptionLength || /[\u0000-\u001f\u007f]/.test(trimmed)) {
    return {
      problems: [
        {
          code: "webhook.description_invalid",
          field: "description",
          message: `description must be 1-${maxDescriptionLength} characters on one line`,
        },
      ],
    };
  }
  return { description: trimmed, problems: [] };
}

function filterProblems(eventTypes: readonly string[]): EndpointProblem[] {
  return eventFilterProblems(eventTypes).map((problem) => ({
    code: problem.code,
    field: "eventTypes",
    message: `eventTypes: ${problem.message}`,
  }));
}

/**
 * Validates an endpoint to create and pins it to the current API version. The URL comes back in
 * its canonical form (WHATWG URL `href`: lowercase host, punycode, default port dropped); filters
 * come back without duplicates.
 */
export function validateNewEndpoint(input: NewEndpointInput): NewEndpoint {
  const url = urlProblems(input.url);
  const description = descriptionProblems(input.description);
  const problems = [
    ...url.problems,
    ...description.problems,
    ...filterProblems(input.eventTypes),
    ...(input.rateLimit === undefined ? [] : rateLimitProblems(input.rateLimit)),
  ];
  if (problems.length > 0 || url.url === undefined || description.description === undefined) {
    throw new InvalidEndpointError(problems);
  }
  return {
    url: url.url,
    description: description.description,
    eventTypes: [...new Set(input.eventTypes)],
    apiVersion: currentApiVersion,
    rateLimit: input.rateLimit ?? null,
  };
}

/**
 * Validates a partial update (PATCH): only the fields given are checked and returned. The pinned
 * API version never changes. At least one field is required.
 */
export function validateEndpointUpdate(input: EndpointUpdateInput): EndpointChanges {
  const problems: EndpointProblem[] = [];
  const changes: EndpointChanges = {};
  if (
    input.url === undefined &&
    input.description === undefined &&
    input.eventTypes === undefined &&
    input.rateLimit === undefined
  ) {
    throw new InvalidEndpointError([
      {
        code: "webhook.update_empty",
        field: null,
        message: "give at least one of url, description, eventTypes, rateLimit",
      },
    ]);
  }
  if (input.url !== undefined) {
    const url = urlProblems(input.url);
    problems.push(...url.problems);
    if (url.url !== undefined) changes.url = url.url;
  }
  if (input.description !== undefined) {
    const description = descriptionProblems(input.description);
    problems.push(...description.problems);
    if (description.description !== undefined) changes.description = description.description;
  }
  if (input.eventTypes !== undefined) {
    const filters = filterProblems(input.eventTypes);
    problems.push(...filters);
    if (filters.length === 0) changes.eventTypes = [...new Set(input.eventTypes)];
  }
  if (input.rateLimit !== undefined) {
    const rate = input.rateLimit === null ? [] : rateLimitProblems(input.rateLimit);
    problems.push(...rate);
    if (rate.length === 0) changes.rateLimit = input.rateLimit;
  }
  if (problems.length > 0) throw new InvalidEndpointError(problems);
  return changes;
}

/**
 * Optimistic concurrency: passes when no `expectedVersion` was sent or it equals the current
 * `version`; otherwise throws EndpointVersionMismatchError.
 */
export function checkExpectedVersion(currentVersion: number, expectedVersion: number | undefined): void {
  if (expectedVersion !== undefined && expectedVersion !== currentVersion) {
    throw new EndpointVersionMismatchError(expectedVersion, currentVersion);
  }
}

import type { Context } from "koa";
import type { UpdateEndpointRequest } from "@platform/proto/webhooks/v1";
import { ApiError } from "../../http/api-error.js";
import { queryValue } from "../../http/page-query.js";

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value);

const endpointInvalid = (problems: string[]) =>
  new ApiError(400, problems.join("; "), { code: "webhook.endpoint_invalid" });

/** The request's members, refusing anything but a JSON object without unknown members. */
function members(body: unknown, allowed: readonly string[], problems: string[]): Record<string, unknown> {
  if (!isObject(body)) {
    problems.push("the request body must be a JSON object");
    return {};
  }
  for (const name of Object.keys(body)) {
    if (!allowed.includes(name)) problems.push(`${JSON.stringify(name.slice(0, 40))} is not a member of this request`);
  }
  return body;
}

function stringMember(body: Record<string, unknown>, name: string, required: boolean, problems: string[]) {
  const value = body[name];
  if (value === undefined) {
    if (required) problems.push(`${name} is required`);
    return undefined;
  }
  if (typeof value !== "string") {
    problems.push(`${name} must be a string`);
    return undefined;
  }
  return value;
}

function eventTypesMember(body: Record<string, unknown>, required: boolean, problems: string[]) {
  const value = body.eventTypes;
  if (value === undefined) {
    if (required) problems.push("eventTypes is required");
    return undefined;
  }
  if (!Array.isArray(value) || !value.every((item) => typeof item === "string")) {
    problems.push("eventTypes must be an array of strings");
    return undefined;
  }
  return value;
}

function versionValue(value: unknown, where: string, problems: string[]): string | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== "number" || !Number.isSafeInteger(value) || value < 1) {
    problems.push(`${where} must be a positive integer (the endpoint's version)`);
    return undefined;
  }
  return String(value);
}

/** `{"url", "description", "eventTypes": [...]}`, all three required; their values are the service's to judge. */
export function parseNewEndpoint(body: unknown): { url: string; description: string; eventTypes: string[] } {
  const problems: string[] = [];
  const given = members(body, ["url", "description", "eventTypes"], problems);
  const url = stringMember(given, "url", true, problems);
  const description = stringMember(given, "description", true, problems);
  const eventTypes = eventTypesMember(given, true, problems);
  if (problems.length > 0) throw endpointInvalid(problems);
  return { url: url!, description: description!, eventTypes: eventTypes! };
}

/** `{"url"?, "description"?, "eventTypes"?, "expectedVersion"?}` (PATCH). */
export function parseEndpointUpdate(
  body: unknown,
): Pick<UpdateEndpointRequest, "url" | "description" | "eventTypes" | "expectedVersion"> {
  const problems: string[] = [];
  const given = members(body, ["url", "description", "eventTypes", "expectedVersion"], problems);
  const url = stringMember(given, "url", false, problems);
  const description = stringMember(given, "description", false, problems);
  const eventTypes = eventTypesMember(given, false, problems);
  const expectedVersion = versionValue(given.expectedVersion, "expectedVersion", problems);
  if (problems.length > 0) throw endpointInvalid(problems);
  return { url, description, eventTypes: eventTypes === undefined ? undefined : { eventTypes }, expectedVersion };
}

/** `{"eventType": "..."}` of a test delivery. */
export function parseTestDelivery(body: unknown): string {
  const problems: string[] = [];
  const given = members(body, ["eventType"], problems);
  const eventType = stringMember(given, "eventType", true, problems);
  if (problems.length > 0) throw new ApiError(400, problems.join("; "), { code: "request.invalid" });
  return eventType!;
}

/** The optional `expectedVersion` query parameter of delete, pause, resume and rotate. */
export function expectedVersionQuery(ctx: Context): string | undefined {
  const value = queryValue(ctx, "expectedVersion");
  if (value === undefined) return undefined;
  if (!/^[1-9][0-9]{0,14}$/.test(value)) {
    throw new ApiError(400, "expectedVersion must be a positive integer (the endpoint's version)", {
      code: "request.invalid",
    });
  }
  return value;
}

/** The delivery states a ledger query may filter by. */
export const deliveryStatuses = ["pending", "succeeded", "awaiting_retry", "dead_lettered", "held"];

import type { SendNotificationRequest } from "@platform/proto/notify/v1";
import { ApiError } from "../../http/api-error.js";

export const stringMembers = {
  to: "to",
  type: "type",
  clientName: "clientName",
  businessName: "businessName",
  serviceName: "serviceName",
  when: "when",
  newWhen: "newWhen",
  message: "message",
} as const satisfies Record<string, keyof SendNotificationRequest>;

export const invalid = (detail: string) => new ApiError(400, detail, { code: "partner.notification_invalid" });

export const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value);

/**
 * The HTTP shape of a notification request: a JSON object whose members are strings (actor an
 * object, delegationReference a string or null). Every member is passed on; which types, fields
 * and lengths are allowed is notify's business (unknown members go as `otherFields`).
 */
export function toSendNotificationRequest(
  body: unknown,
  tenantId: string,
  idempotencyKey: string,
): SendNotificationRequest {
  if (!isObject(body)) throw invalid("the request body must be a JSON object");
  const request: SendNotificationRequest = { tenantId, idempotencyKey, actor: undefined, otherFields: [] };
  const problems: string[] = [];
  for (const [name, value] of Object.entries(body)) {
    if (Object.hasOwn(stringMembers, name)) {
      if (typeof value === "string") request[stringMembers[name as keyof typeof stringMembers]] = value;
      else problems.push(`${name} must be a string`);
    } else if (name === "actor") {
      if (value === null) continue;
      if (!isObject(value)) {
        problems.push("actor must be an object with actorReference");
        continue;
      }
      request.actor = {};
      for (const [member, memberValue] of Object.entries(value)) {
        if (member === "actorReference") {
          if (typeof memberValue === "string") request.actor.actorReference = memberValue;
          else problems.push("actor.actorReference must be a string");
        } else if (member === "delegationReference") {
          if (typeof memberValue === "string") request.actor.delegationReference = memberValue;
          else if (memberValue !== null) problems.push("actor.delegationReference must be a string or null");
        } else request.otherFields.push(`actor.${member}`);
      }
    } else request.otherFields.push(name);
  }
  if (problems.length > 0) throw invalid(problems.join("; "));
  return request;
}

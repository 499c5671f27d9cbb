import type { SendNotificationRequest } from "@platform/proto/notify/v1";
import { z } from "zod";
import { ApiError } from "../../http/api-error.js";
import { mustBe, parseShape } from "../../http/request-shape.js";

const invalid = (detail: string) => new ApiError(400, detail, { code: "partner.notification_invalid" });

/** A template field; the TemplateField component of the document (notify judges the length). */
export const templateFieldShape = z
  .string(mustBe("a string"))
  .meta({ id: "TemplateField", maxLength: 300, description: "At most 300 characters (Unicode code points)." });

const templateField = templateFieldShape.optional();

/** The actor: an object; a null actor counts as absent, so notify answers that actor is required. */
const actor = z.preprocess(
  (value) => (value === null ? undefined : value),
  z
    .looseObject(
      {
        actorReference: z.string(mustBe("a string")).meta({ minLength: 1, maxLength: 300 }).optional(),
        delegationReference: z
          .string({ error: "must be a string or null" })
          .nullable()
          .meta({ maxLength: 300 })
          .optional(),
      },
      { error: "must be an object with actorReference" },
    )
    .meta({ required: ["actorReference"], additionalProperties: false })
    .optional(),
);

/**
 * The notification request, deliberately loose at the gateway: a JSON object whose known members
 * are strings (actor an object, delegationReference a string or null). Which types, fields and
 * lengths are allowed is notify's business: what the document says beyond that (required members,
 * the recipient's pattern, the types, no other members) is declared as documentation here, and
 * unknown members go on as `otherFields` for notify to refuse.
 */
export const notificationRequestShape = z
  .looseObject(
    {
      to: z
        .string(mustBe("a string"))
        .meta({ pattern: "^\\+?[0-9]{8,15}$", description: "International format, 8-15 digits, optional leading +" })
        .optional(),
      type: z
        .string(mustBe("a string"))
        .meta({ enum: ["reminder", "no_show", "cancelled", "rescheduled", "update"] })
        .optional(),
      clientName: templateField,
      businessName: templateField,
      serviceName: templateField,
      when: templateField,
      newWhen: templateField,
      message: templateField,
      actor,
    },
    { error: "the request body must be a JSON object" },
  )
  .meta({
    description:
      "Required template fields per type: reminder (clientName, businessName, serviceName, when), no_show " +
      "(clientName, serviceName), cancelled (clientName, serviceName, when), rescheduled (clientName, " +
      "serviceName, when, newWhen), update (clientName, businessName, message). Each field is collapsed to one " +
      "line before rendering. Retired types and message keys, retired fields (paymentUrl, feeAmount), " +
      "scheduling fields (sendAt, scheduledAt, deliveryMode, ...) and any other member are refused with 400 " +
      "partner.notification_invalid.",
    required: ["to", "type", "actor"],
    additionalProperties: false,
  });

type Notification = z.output<typeof notificationRequestShape>;
const textMembers = ["to", "type", "clientName", "businessName", "serviceName", "when", "newWhen", "message"] as const;
const isDeclared = (name: string) => Object.hasOwn(notificationRequestShape.shape, name);
const declaredActorMembers = new Set(["actorReference", "delegationReference"]);

/** Members the shape does not declare, in the order the request gave them (an actor's as `actor.<member>`). */
function otherFieldsOf(body: object, notification: Notification): string[] {
  return Object.keys(body).flatMap((name) => {
    if (name === "actor") {
      return Object.keys(notification.actor ?? {})
        .filter((member) => !declaredActorMembers.has(member))
        .map((member) => `actor.${member}`);
    }
    return isDeclared(name) ? [] : [name];
  });
}

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value);
const isTextOrAbsent = (value: unknown) => value === undefined || typeof value === "string";

/**
 * Whether the shape passes `body` unchanged in every member read here: a JSON object whose
 * declared text members are strings or absent, and whose actor is absent, null (read as absent)
 * or an object whose actorReference is a string or absent and delegationReference a string, null
 * or absent. Nearly every request is such a body and skips the schema's walk and copy; any other
 * (whatever the shape refuses, and a `__proto__` member, which a copy would not keep as a member)
 * goes through the schema.
 */
function passesAsIs(body: unknown): body is Notification {
  if (!isRecord(body) || Object.hasOwn(body, "__proto__")) return false;
  for (const name of textMembers) if (!isTextOrAbsent(body[name])) return false;
  const actor = body.actor;
  if (actor === undefined || actor === null) return true;
  return (
    isRecord(actor) &&
    !Object.hasOwn(actor, "__proto__") &&
    isTextOrAbsent(actor.actorReference) &&
    (actor.delegationReference === null || isTextOrAbsent(actor.delegationReference))
  );
}

/** The notification request checked at the gateway and passed on to notify. */
export function toSendNotificationRequest(
  body: unknown,
  tenantId: string,
  idempotencyKey: string,
): SendNotificationRequest {
  const notification = passesAsIs(body) ? body : parseShape(notificationRequestShape, body, invalid);
  const request: SendNotificationRequest = { tenantId, idempotencyKey, actor: undefined, otherFields: [] };
  for (const name of textMembers) if (notification[name] !== undefined) request[name] = notification[name];
  if (notification.actor) {
    const { actorReference, delegationReference } = notification.actor;
    request.actor = {
      ...(actorReference === undefined ? {} : { actorReference }),
      ...(delegationReference == null ? {} : { delegationReference }),
    };
  }
  request.otherFields = otherFieldsOf(body as object, notification);
  return request;
}

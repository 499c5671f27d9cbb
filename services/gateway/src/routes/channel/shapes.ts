import { z } from "zod";
import { ApiError } from "../../http/api-error.js";
import { isNotAnObject, mustBe, parseShape } from "../../http/request-shape.js";

const notificationTypes = ["reminder", "no_show", "cancelled", "rescheduled", "update"] as const;

const template = z.object(
  {
    name: z.string(mustBe("a string")).meta({ pattern: "^[a-z0-9_]{1,512}$" }),
    language: z.string(mustBe("a string")).meta({ pattern: "^[A-Za-z_]{2,10}$", description: "e.g. en_US" }),
  },
  { error: "must be an object with name and language" },
);

const keywords = z
  .array(z.string(mustBe("a string")).meta({ minLength: 1, maxLength: 32 }), mustBe("an array of strings"))
  .meta({ maxItems: 20 })
  .optional();

/**
 * PUT /channel: the tenant's own WhatsApp number. The gateway checks the shape; notify checks the
 * values (ids, token, template names, ranges) and names every problem (never the token).
 */
export const channelRequestShape = z
  .object(
    {
      wabaId: z
        .string(mustBe("a string"))
        .meta({ pattern: "^[0-9]{1,32}$", description: "The WhatsApp Business Account id." }),
      phoneNumberId: z
        .string(mustBe("a string"))
        .meta({ pattern: "^[0-9]{1,32}$", description: "The phone number id (not the phone number)." }),
      accessToken: z.string(mustBe("a string")).meta({
        minLength: 16,
        maxLength: 4096,
        writeOnly: true,
        description:
          "A system-user access token with whatsapp_business_messaging permission. Sealed at rest; never returned or logged. Connecting again with a new one rotates it.",
      }),
      templates: z
        .partialRecord(z.enum(notificationTypes), template, mustBe("an object of notification types"))
        .meta({
          description: "The approved template per notification type; types not named use the platform's defaults.",
        })
        .optional(),
      messagesPerSecond: z
        .int(mustBe("an integer"))
        .meta({ minimum: 1, maximum: 1000, description: "The number's throughput (default 80)." })
        .optional(),
      stopKeywords: keywords.meta({
        description: "Inbound words that opt a customer out (default STOP, UNSUBSCRIBE); case-insensitive, trimmed.",
      }),
      startKeywords: keywords.meta({ description: "Inbound words that opt a customer back in (default START)." }),
      expectedVersion: z
        .int(mustBe("an integer"))
        .meta({
          minimum: 1,
          description:
            "The tenant record's `version` you read; a different current version answers 412 tenant.version_mismatch.",
        })
        .optional(),
    },
    { error: "the request body must be a JSON object" },
  )
  .meta({ additionalProperties: false });

export type ChannelRequest = z.output<typeof channelRequestShape>;

/** The connection asked for; every shape problem named in one detail (no object: request.invalid). */
export function parseChannelRequest(body: unknown): ChannelRequest {
  return parseShape(
    channelRequestShape,
    body,
    (detail, issues) =>
      new ApiError(400, detail, { code: isNotAnObject(issues) ? "request.invalid" : "channel.invalid" }),
  );
}

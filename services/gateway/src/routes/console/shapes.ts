import { z } from "zod";
import { isConsoleLocation } from "../../domain/console-path.js";
import { ApiError } from "../../http/api-error.js";
import { isNotAnObject, parseShape } from "../../http/request-shape.js";

/**
 * `{"userId": "usr_..."}` or `{"email": "..."}` (exactly one), and an optional `redirectPath` under
 * /console (default /console). Unknown members are ignored.
 */
export const consoleLinkShape = z
  .object(
    {
      userId: z
        .string({ error: "must be a string" })
        .regex(/^usr_[0-9a-f]{24}$/, "must be a console user id (usr_ and 24 hex digits)")
        .optional()
        .meta({ description: "The console user's id (`admin user create` prints it)." }),
      email: z
        .string({ error: "must be a string" })
        .min(3, "must be an email address")
        .max(320, "must be at most 320 characters")
        .optional()
        .meta({ description: "The console user's email, compared without regard to case." }),
      redirectPath: z
        .string({ error: "must be a string" })
        .refine(isConsoleLocation, "must be a path under /console (at most 512 characters, no //)")
        .optional()
        .meta({ description: "The console page the link opens (default `/console`)." }),
    },
    { error: "the request body must be a JSON object" },
  )
  .refine((order) => (order.userId === undefined) !== (order.email === undefined), {
    message: "name the user with exactly one of userId and email",
    when: ({ issues }) => issues.length === 0,
  })
  .meta({ description: "Exactly one of `userId` and `email` names a console user of the tenant." });

export interface ConsoleLinkRequest {
  userId?: string;
  email?: string;
  redirectPath: string;
}

/** The order; every problem named in one detail (400 console.link_invalid, or request.invalid for a non-object). */
export function parseConsoleLinkRequest(body: unknown): ConsoleLinkRequest {
  const { userId, email, redirectPath } = parseShape(
    consoleLinkShape,
    body,
    (detail, issues) =>
      new ApiError(400, detail, { code: isNotAnObject(issues) ? "request.invalid" : "console.link_invalid" }),
  );
  return {
    ...(userId === undefined ? {} : { userId }),
    ...(email === undefined ? {} : { email: email.trim().toLowerCase() }),
    redirectPath: redirectPath ?? "/console",
  };
}

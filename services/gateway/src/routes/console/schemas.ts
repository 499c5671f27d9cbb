import { shapeSchema } from "../../http/openapi/shape-schema.js";
import { consoleLinkShape } from "./shapes.js";

/** The console link schemas (routes.ts). */
export const consoleSchemas = {
  ConsoleLinkRequest: shapeSchema(consoleLinkShape),
  ConsoleLink: {
    type: "object",
    required: ["id", "url", "expiresAt"],
    additionalProperties: false,
    properties: {
      id: { type: "string", pattern: "^cl_[0-9a-f]{24}$" },
      url: {
        type: "string",
        format: "uri",
        description:
          "Open it in the user's browser (a redirect or a new window) at once: it signs the user in once, then " +
          "answers 303 to a clean console URL. Do not log it or put it in a page that others may load.",
      },
      expiresAt: { type: "string", format: "date-time" },
    },
  },
};

import type { CodeEntries } from "../code-entry.js";

/** Keys, scopes and tenant grants (spec 5). */
export const authCodes = {
  "auth.key_missing": {
    status: 401,
    title: "An API key is required",
    meaning: "The request carries no `Authorization: Bearer <key>` header.",
    reaction: "Send a live API key; no retry without one.",
    usedAs: ["problem"],
  },
  "auth.scheme_invalid": {
    status: 401,
    title: "The Authorization header is not Bearer <key>",
    meaning:
      "The `Authorization` header is not `Bearer <key>`: the key alone (no `Bearer ` before it), another scheme such as Basic, or Bearer with no key. The key itself was not looked at.",
    reaction: "Send the key as `Authorization: Bearer <key>`; never retry as it is.",
    usedAs: ["problem"],
  },
  "auth.key_invalid": {
    status: 401,
    title: "The API key is malformed, unknown or revoked",
    meaning: "The key is not one we issued, or it was revoked.",
    reaction: "Repair the key (ask the operator for a new one); no retry.",
    usedAs: ["problem"],
  },
  "auth.scope_missing": {
    status: 403,
    title: "The API key lacks the scope this operation needs",
    meaning: "The key is valid and granted this tenant, but not the operation's scope.",
    reaction: "Have the key's scopes fixed; no retry.",
    usedAs: ["problem"],
  },
} as const satisfies CodeEntries;

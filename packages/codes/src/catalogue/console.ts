import type { CodeEntries } from "../code-entry.js";

/** The console's users and the console links partners mint for them (docs/console.md). */
export const consoleCodes = {
  "console.link_invalid": {
    status: 400,
    title: "The console link request is invalid",
    meaning:
      "The body does not name exactly one console user (`userId` or `email`), or `redirectPath` is not a path " +
      "under /console; the detail names every problem.",
    reaction: "Fix the request; never retry it as it is.",
    usedAs: ["problem"],
  },
  "console.user_not_found": {
    status: 404,
    title: "Console user not found",
    meaning: "The tenant has no console user with this id or email (a user of another tenant looks the same).",
    reaction:
      "Check the user id or email; create the user (operator: `admin user create`) before minting links for it.",
    usedAs: ["problem"],
  },
  "console.user_disabled": {
    status: 409,
    title: "The console user is disabled",
    meaning: "The console user exists but is disabled: no link can sign them in.",
    reaction: "Do not retry; ask the tenant's owner or the operator whether the user should be enabled again.",
    usedAs: ["problem"],
  },
} as const satisfies CodeEntries;

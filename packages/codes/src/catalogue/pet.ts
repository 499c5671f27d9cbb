import type { CodeEntries } from "../code-entry.js";

const animal =
  "The animal interface (/v1) answers with its own one-code-per-status Error shape (spec 2.2), so this code stays between the catalog service and the gateway";

/** The catalog service's gRPC codes behind the animal interface (never tenant-interface problems). */
export const petCodes = {
  "pet.not_found": {
    title: "Pet not found",
    meaning: `No pet with this id. ${animal}: the client sees 404 \`not_found\`.`,
    reaction: "Verify the id; no blind retry.",
    usedAs: ["internal"],
  },
  "pet.invalid": {
    title: "The pet is invalid",
    meaning: `A pet field breaks a rule; the message names it. ${animal}: the client sees 400 \`bad_request\`.`,
    reaction: "Fix the request; never retry it as it is.",
    usedAs: ["internal"],
  },
  "page.invalid_limit": {
    title: "The page limit is out of range",
    meaning: `\`limit\` is not within the allowed page sizes. ${animal}: the client sees 400 \`bad_request\`.`,
    reaction: "Fix the request; never retry it as it is.",
    usedAs: ["internal"],
  },
  "page.invalid_cursor": {
    title: "The page cursor is not valid",
    meaning: `\`cursor\` was not issued for this listing. ${animal}: the client sees 400 \`bad_request\`.`,
    reaction: "Start the listing again from the first page.",
    usedAs: ["internal"],
  },
} as const satisfies CodeEntries;

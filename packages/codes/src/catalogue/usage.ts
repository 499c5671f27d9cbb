import type { CodeEntries } from "../code-entry.js";

/** Token usage and its monthly caps. */
export const usageCodes = {
  "usage.limits_invalid": {
    status: 400,
    title: "The usage limits are invalid",
    meaning: "A cap is missing, not a whole number from 0 to 2^53-1, or the soft cap is above the hard cap.",
    reaction: "Fix the request; never retry it as it is.",
    usedAs: ["problem"],
  },
} as const satisfies CodeEntries;

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
  "usage.version_mismatch": {
    status: 412,
    title: "The usage limits changed since you read them",
    meaning: "expectedVersion is not the limits' current version (0 means never set): someone else changed them first.",
    reaction: "GET /usage/limits (or /usage) again, decide on the new values and retry with the current version.",
    usedAs: ["problem"],
  },
  "usage.record_invalid": {
    title: "The usage record is invalid",
    meaning: "tokens is not a whole number from 1 to 2^53-1, or the record id is not 1-128 of A-Z a-z 0-9 _ . : -.",
    reaction: "Fix the record; never retry it as it is.",
    usedAs: ["internal"],
  },
} as const satisfies CodeEntries;

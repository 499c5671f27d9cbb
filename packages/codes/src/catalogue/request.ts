import type { CodeEntries } from "../code-entry.js";

const fix = "Fix the request; never retry it as it is.";

/** The HTTP edge: request shape, headers, routes, rate limits. */
export const requestCodes = {
  "request.invalid": {
    status: 400,
    title: "The request is invalid",
    meaning: "A path segment, query parameter or header is malformed; `detail` names it.",
    reaction: fix,
    usedAs: ["problem"],
  },
  "request.body_invalid": {
    status: 400,
    title: "The request body is not valid JSON",
    meaning: "The body could not be parsed as JSON.",
    reaction: fix,
    usedAs: ["problem"],
  },
  "request.idempotency_key_required": {
    status: 400,
    title: "An Idempotency-Key header is required",
    meaning: "Every tenant-interface mutation needs an Idempotency-Key header.",
    reaction: "Send one derived from the logical command (the same one on every retry of it).",
    usedAs: ["problem"],
  },
  "request.idempotency_key_invalid": {
    status: 400,
    title: "The Idempotency-Key header is malformed",
    meaning: "The key is not 8-128 characters of A-Z a-z 0-9 _ . : -.",
    reaction: fix,
    usedAs: ["problem"],
  },
  "request.route_not_found": {
    status: 404,
    title: "No such resource",
    meaning: "No operation exists at this path.",
    reaction: "Check the path against the OpenAPI document; no blind retry.",
    usedAs: ["problem"],
  },
  "request.method_not_allowed": {
    status: 405,
    title: "Method not allowed",
    meaning: "The path exists but not with this method; the `Allow` header lists the methods it has.",
    reaction: fix,
    usedAs: ["problem"],
  },
  "request.body_too_large": {
    status: 413,
    title: "The request body is too large",
    meaning: "The body exceeds the size limit.",
    reaction: fix,
    usedAs: ["problem"],
  },
  "request.unsupported_media_type": {
    status: 415,
    title: "Unsupported media type",
    meaning: "The body is not sent as application/json.",
    reaction: "Send `Content-Type: application/json`.",
    usedAs: ["problem"],
  },
  "request.rate_limited": {
    status: 429,
    title: "Too many requests",
    meaning: "The API key's rate limit is used up for now.",
    reaction:
      "Honour `Retry-After`; else back off exponentially with jitter and a cap; bounded retries with the same Idempotency-Key.",
    usedAs: ["problem"],
  },
  "request.outcome_unknown": {
    title: "The outcome of the request is unknown",
    meaning:
      "The gateway's name for a mutation sent without an Idempotency-Key that was not confirmed in time (it may or may not have taken effect). Only the animal interface has such mutations: it answers 504 `outcome_unknown`.",
    reaction: "Read the resource back before acting again; send an Idempotency-Key so that a retry is always safe.",
    usedAs: ["internal"],
  },
} as const satisfies CodeEntries;

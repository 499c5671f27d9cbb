import type { CodeEntries } from "../code-entry.js";

/** Idempotency records and the platform's own availability. */
export const serviceCodes = {
  "idempotency.in_progress": {
    status: 409,
    title: "A request with this Idempotency-Key is in progress",
    meaning: "The first request with this key has not finished yet.",
    reaction: "Wait briefly and retry with the same key: it then replays the first result.",
    usedAs: ["problem"],
  },
  "idempotency.key_reused": {
    status: 422,
    title: "Idempotency-Key reused with a different request",
    meaning: "The key was already used for a request with a different body or path.",
    reaction: "Use a new key for a new command; never retry as is.",
    usedAs: ["problem"],
  },
  "idempotency.invalid_key": {
    title: "The Idempotency-Key is malformed (catalog service)",
    meaning:
      "The catalog service's own check of the key the gateway passes on; the gateway checks the header first (`request.idempotency_key_invalid`), so a partner never sees this code.",
    reaction: "None for a partner; in our logs it means the gateway passed on a key it should have refused.",
    usedAs: ["internal"],
  },
  "service.internal_error": {
    status: 500,
    title: "Internal error",
    meaning: "Something failed on our side; it is logged under the correlation id.",
    reaction:
      "Retry a read; retry a mutation only with the same Idempotency-Key; report the correlationId if it persists.",
    usedAs: ["problem"],
  },
  "service.unavailable": {
    status: 503,
    title: "Service temporarily unavailable",
    meaning: "A part of the platform the operation needs is unreachable for now.",
    reaction: "Retry with backoff using the same Idempotency-Key; honour `Retry-After`.",
    usedAs: ["problem"],
  },
} as const satisfies CodeEntries;

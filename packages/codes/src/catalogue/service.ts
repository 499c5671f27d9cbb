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
  "sealing.key_invalid": {
    title: "SECRETS_KEY cannot be read",
    meaning:
      "A service's SECRETS_KEY is missing or malformed (service-kit secret-box.ts); the service refuses to start, naming the bad entry (never its value).",
    reaction: "The operator sets SECRETS_KEY as docs/operations.md says.",
    usedAs: ["internal"],
  },
  "sealing.sealed_malformed": {
    title: "A sealed secret is malformed",
    meaning: "A stored sealed secret is not in the v1.<keyId>.<iv>.<tag>.<ciphertext> format.",
    reaction: "Reconnect the secret's owner (a tenant's channel: PUT /channel with the token again).",
    usedAs: ["internal"],
  },
  "sealing.key_unknown": {
    title: "A sealed secret names a key SECRETS_KEY does not hold",
    meaning: "A secret was sealed under a key id that is no longer in SECRETS_KEY.",
    reaction: "Put the old key back after the active one (docs/operations.md, Rotating SECRETS_KEY).",
    usedAs: ["internal"],
  },
  "sealing.decryption_failed": {
    title: "A sealed secret does not open",
    meaning: "A sealed secret does not authenticate under its key (a wrong key or a value moved between owners).",
    reaction: "Reconnect the secret's owner with the secret again.",
    usedAs: ["internal"],
  },
} as const satisfies CodeEntries;

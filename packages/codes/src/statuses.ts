/**
 * The tenant interface's statuses with their meaning and the client's reaction (spec 7.2's table,
 * with the statuses the platform adds). A client that meets a code it does not know falls back to
 * its status's row.
 */
export const statusReactions: readonly { status: number; meaning: string; reaction: string }[] = [
  { status: 400, meaning: "malformed request", reaction: "fix; never retry as is" },
  { status: 401, meaning: "key missing, malformed or revoked", reaction: "repair key; no retry" },
  { status: 403, meaning: "key lacks scope or tenant grant", reaction: "fix scopes or grants; no retry" },
  { status: 404, meaning: "unknown id or ungranted tenant", reaction: "verify id and grants; no blind retry" },
  {
    status: 405,
    meaning: "method not allowed on this path (`Allow` lists the others)",
    reaction: "fix; never retry as is",
  },
  { status: 409, meaning: "state conflict", reaction: "read the resource, then decide" },
  {
    status: 412,
    meaning: "version precondition failed (`expectedVersion` no longer matches `version`)",
    reaction: "re-read, retry with current version",
  },
  { status: 413, meaning: "body too large", reaction: "fix; never retry as is" },
  { status: 415, meaning: "body not sent as application/json", reaction: "fix; never retry as is" },
  {
    status: 422,
    meaning: "Idempotency-Key reused with a different request",
    reaction: "use a new key for a new command; never retry as is",
  },
  {
    status: 429,
    meaning: "rate limited; may carry `Retry-After`",
    reaction: "honor it, else exponential backoff with jitter and a cap; bounded retries",
  },
  {
    status: 500,
    meaning: "internal error",
    reaction: "retry a read; retry a mutation only with the same idempotency key; report the correlationId",
  },
  { status: 503, meaning: "temporarily unavailable", reaction: "retry with backoff using the same idempotency key" },
];

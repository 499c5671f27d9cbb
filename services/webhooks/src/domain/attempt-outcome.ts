/**
 * What one delivery attempt came to (spec 6.1 item 4): a 2xx is a success; any other status, a
 * timeout or a connection failure is a failed attempt. Redirects are not followed: a 3xx is a
 * failure. Also: the stored copy of the receiver's answer (first 4 KiB, cut on a UTF-8 boundary).
 */

/** What the HTTP client saw, in transport-neutral words. */
export type AttemptResult =
  /** `retryAfter`: the answer's Retry-After header as received (retry-delays.ts reads it). */
  | { kind: "response"; status: number; retryAfter?: string }
  | { kind: "timeout" }
  | { kind: "connection_error" }
  | { kind: "tls_error" }
  /** The URL's host resolved to an address deliveries may not reach (checked at every attempt). */
  | { kind: "target_not_allowed" };

export type AttemptFailureReason =
  "non_2xx_status" | "redirect_not_followed" | "timeout" | "connection_error" | "tls_error" | "target_not_allowed";

export type AttemptOutcome =
  { ok: true; statusCode: number } | { ok: false; reason: AttemptFailureReason; statusCode: number | null };

export function classifyAttempt(result: AttemptResult): AttemptOutcome {
  switch (result.kind) {
    case "response": {
      const { status } = result;
      if (status >= 200 && status <= 299) return { ok: true, statusCode: status };
      if (status >= 300 && status <= 399) return { ok: false, reason: "redirect_not_followed", statusCode: status };
      return { ok: false, reason: "non_2xx_status", statusCode: status };
    }
    case "timeout":
      return { ok: false, reason: "timeout", statusCode: null };
    case "connection_error":
      return { ok: false, reason: "connection_error", statusCode: null };
    case "tls_error":
      return { ok: false, reason: "tls_error", statusCode: null };
    case "target_not_allowed":
      return { ok: false, reason: "target_not_allowed", statusCode: null };
  }
}

const TIMEOUT_CODES = new Set([
  "ETIMEDOUT",
  "ESOCKETTIMEDOUT",
  "UND_ERR_CONNECT_TIMEOUT",
  "UND_ERR_HEADERS_TIMEOUT",
  "UND_ERR_BODY_TIMEOUT",
]);
const TIMEOUT_NAMES = new Set(["TimeoutError", "AbortError"]);
const TLS_CODES = new Set([
  "CERT_HAS_EXPIRED",
  "CERT_NOT_YET_VALID",
  "CERT_REVOKED",
  "DEPTH_ZERO_SELF_SIGNED_CERT",
  "SELF_SIGNED_CERT_IN_CHAIN",
  "UNABLE_TO_GET_ISSUER_CERT",
  "UNABLE_TO_GET_ISSUER_CERT_LOCALLY",
  "UNABLE_TO_VERIFY_LEAF_SIGNATURE",
  "ERR_TLS_CERT_ALTNAME_INVALID",
  "ERR_SSL_WRONG_VERSION_NUMBER",
]);

/**
 * Classifies an error thrown by the HTTP client (node:https or fetch/undici, whose errors wrap
 * the cause) as a timeout, a TLS failure or, by default, a connection failure.
 */
export function classifyTransportError(error: unknown): AttemptResult {
  for (let current = error, depth = 0; current && typeof current === "object" && depth < 5; depth += 1) {
    const { code, name } = current as { code?: unknown; name?: unknown };
    if (typeof code === "string" && TIMEOUT_CODES.has(code)) return { kind: "timeout" };
    if (typeof name === "string" && TIMEOUT_NAMES.has(name)) return { kind: "timeout" };
    if (
      typeof code === "string" &&
      (TLS_CODES.has(code) || code.startsWith("ERR_SSL_") || code.startsWith("ERR_TLS_"))
    ) {
      return { kind: "tls_error" };
    }
    current = (current as { cause?: unknown }).cause;
  }
  return { kind: "connection_error" };
}

/** How much of the receiver's answer is stored (spec: the first 4 KiB). */
export const storedResponseBodyBytes = 4096;

/**
 * The first `limit` bytes of a response body, cut back to the start of a UTF-8 character so the
 * stored copy never ends in half a character. Binary bodies are cut at most 3 bytes short.
 */
export function truncateResponseBody(
  body: Uint8Array,
  limit = storedResponseBodyBytes,
): { body: Buffer; truncated: boolean } {
  const bytes = Buffer.from(body.buffer, body.byteOffset, body.byteLength);
  if (bytes.length <= limit) return { body: Buffer.from(bytes), truncated: false };
  let cut = limit;
  // A byte 10xxxxxx continues a character: step back to its lead byte (at most 3 steps).
  while (cut > 0 && limit - cut < 3 && (bytes[cut]! & 0xc0) === 0x80) cut -= 1;
  if ((bytes[cut]! & 0xc0) === 0x80) cut = limit; // not UTF-8 text: keep the full limit
  return { body: Buffer.from(bytes.subarray(0, cut)), truncated: true };
}

/**
 * The class of a failed attempt, as the console groups them and an endpoint's dead-letter
 * cause names them: "timeout", "tls", "refused_target" (the SSRF guard refused the address or
 * port), "connection", "http_3xx" (a redirect, never followed), "http_4xx", "http_5xx",
 * "http_other" (any other non-2xx status). Null for a success.
 */
export type AttemptErrorClass =
  "timeout" | "tls" | "refused_target" | "connection" | "http_3xx" | "http_4xx" | "http_5xx" | "http_other";

export function errorClassOf(attempt: {
  succeeded: boolean;
  error: string | null;
  statusCode: number | null;
}): AttemptErrorClass | null {
  if (attempt.succeeded) return null;
  switch (attempt.error) {
    case "timeout":
      return "timeout";
    case "tls_error":
      return "tls";
    case "target_not_allowed":
      return "refused_target";
    case "connection_error":
      return "connection";
  }
  const status = attempt.statusCode;
  if (status === null) return "connection";
  if (status >= 300 && status <= 399) return "http_3xx";
  if (status >= 400 && status <= 499) return "http_4xx";
  if (status >= 500 && status <= 599) return "http_5xx";
  return "http_other";
}

/**
 * Verifies a webhook delivery signed with the `Service-Signature` header:
 *
 *   Service-Signature: t=<unix seconds>,v1=<lowercase hex HMAC-SHA256 of "<t>.<raw body>">[,v1=...]
 *
 * The HMAC key is the endpoint secret exactly as shown to you (the whole `whsec_...` string, as
 * UTF-8). During the 24 hours after a secret rotation the header carries a second `v1` entry
 * signed with the previous secret; a delivery is genuine when any `v1` matches any of your secrets.
 *
 * This file depends only on node:crypto: copy it into your receiver as it is if you like.
 */
import { createHmac, timingSafeEqual } from "node:crypto";

/** The header name as Node's http module presents it (lowercase). */
export const signatureHeaderName = "service-signature";

/** How far `t` may be from now, either way, before a delivery is refused (spec: 5 minutes). */
export const defaultToleranceSeconds = 300;

export type WebhookVerificationErrorCode =
  "header_missing" | "header_malformed" | "timestamp_outside_tolerance" | "no_matching_signature";

/** Every refusal is one of these; branch on `code`, which is stable. Messages never contain secrets. */
export class WebhookVerificationError extends Error {
  override name = "WebhookVerificationError";
  constructor(
    readonly code: WebhookVerificationErrorCode,
    message: string,
  ) {
    super(message);
  }
}

export class SignatureHeaderMissingError extends WebhookVerificationError {
  override name = "SignatureHeaderMissingError";
  constructor() {
    super("header_missing", "the Service-Signature header is missing");
  }
}

export class SignatureHeaderMalformedError extends WebhookVerificationError {
  override name = "SignatureHeaderMalformedError";
  constructor(reason: string) {
    super("header_malformed", `the Service-Signature header is malformed: ${reason}`);
  }
}

export class TimestampOutsideToleranceError extends WebhookVerificationError {
  override name = "TimestampOutsideToleranceError";
  constructor(
    readonly timestamp: number,
    readonly toleranceSeconds: number,
  ) {
    super("timestamp_outside_tolerance", `the signature timestamp is more than ${toleranceSeconds} s from now`);
  }
}

export class NoMatchingSignatureError extends WebhookVerificationError {
  override name = "NoMatchingSignatureError";
  constructor() {
    super("no_matching_signature", "no v1 signature matches the body and the given secrets");
  }
}

export interface ParsedSignatureHeader {
  /** `t`, in Unix seconds. */
  timestamp: number;
  /** Every `v1` entry, in header order. */
  signatures: string[];
}

/**
 * Splits the header into its timestamp and `v1` signatures. Entries of other schemes are ignored,
 * so a future `v2` does not break receivers. Refuses a header without exactly one integer `t` or
 * without any `v1`.
 */
export function parseSignatureHeader(header: string | readonly string[] | undefined | null): ParsedSignatureHeader {
  if (header === undefined || header === null) throw new SignatureHeaderMissingError();
  const text = typeof header === "string" ? header : header.join(",");
  if (text.trim() === "") throw new SignatureHeaderMissingError();
  let timestamp: number | undefined;
  let timestamps = 0;
  const signatures: string[] = [];
  for (const entry of text.split(",")) {
    const equals = entry.indexOf("=");
    if (equals < 0) throw new SignatureHeaderMalformedError("every entry must be key=value");
    const key = entry.slice(0, equals).trim();
    const value = entry.slice(equals + 1).trim();
    if (key === "t") {
      timestamps += 1;
      if (!/^\d{1,12}$/.test(value)) throw new SignatureHeaderMalformedError("t must be Unix seconds");
      timestamp = Number(value);
    } else if (key === "v1") {
      signatures.push(value);
    }
  }
  if (timestamps !== 1 || timestamp === undefined) {
    throw new SignatureHeaderMalformedError("exactly one t entry is required");
  }
  if (signatures.length === 0) throw new SignatureHeaderMalformedError("no v1 entry");
  return { timestamp, signatures };
}

export interface VerifyOptions {
  /** The request body exactly as received, before any JSON parsing. */
  payload: Buffer | Uint8Array | string;
  /** The Service-Signature header value (an array is joined, as when the header was repeated). */
  header: string | readonly string[] | undefined | null;
  /** Your endpoint secret, or several (for example the old and the new one while you rotate). */
  secrets: string | readonly string[];
  /** Allowed distance between `t` and now, in seconds; default 300. */
  toleranceSeconds?: number;
  /** Now, for tests; default the system clock. */
  now?: Date | number;
}

/**
 * Throws a WebhookVerificationError unless some `v1` entry is the HMAC of `<t>.<payload>` under
 * one of the secrets and `t` is within the tolerance of now. Comparison is constant time.
 * Returns the verified timestamp.
 */
export function verifySignature(options: VerifyOptions): { timestamp: number } {
  const secrets = typeof options.secrets === "string" ? [options.secrets] : options.secrets;
  if (secrets.length === 0 || secrets.some((secret) => secret.length === 0)) {
    throw new TypeError("verifySignature needs at least one non-empty secret");
  }
  const tolerance = options.toleranceSeconds ?? defaultToleranceSeconds;
  if (!Number.isFinite(tolerance) || tolerance < 0) {
    throw new TypeError("toleranceSeconds must be a non-negative number");
  }
  const { timestamp, signatures } = parseSignatureHeader(options.header);
  const payload = typeof options.payload === "string" ? Buffer.from(options.payload, "utf8") : options.payload;

  const candidates = signatures.filter((signature) => /^[0-9a-f]{64}$/.test(signature));
  let matched = false;
  for (const secret of secrets) {
    const expected = createHmac("sha256", secret).update(`${timestamp}.`).update(payload).digest();
    for (const candidate of candidates) {
      // Both sides are 32 bytes here, so timingSafeEqual never throws and reveals nothing.
      if (timingSafeEqual(expected, Buffer.from(candidate, "hex"))) matched = true;
    }
  }
  if (!matched) throw new NoMatchingSignatureError();

  const nowMs =
    options.now === undefined ? Date.now() : typeof options.now === "number" ? options.now : options.now.getTime();
  const nowSeconds = Math.floor(nowMs / 1000);
  if (Math.abs(nowSeconds - timestamp) > tolerance) throw new TimestampOutsideToleranceError(timestamp, tolerance);
  return { timestamp };
}

/** The event envelope every delivery carries (snake_case, as sent). */
export interface WebhookEvent<T = Record<string, unknown>> {
  id: string;
  type: string;
  api_version: string;
  occurred_at: string;
  tenant: string;
  livemode: boolean;
  data: { object: T };
}

/** verifySignature, then parses the verified body as the event envelope. */
export function verifyWebhook<T = Record<string, unknown>>(options: VerifyOptions): WebhookEvent<T> {
  verifySignature(options);
  const text = typeof options.payload === "string" ? options.payload : Buffer.from(options.payload).toString("utf8");
  return JSON.parse(text) as WebhookEvent<T>;
}

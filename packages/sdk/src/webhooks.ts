/**
 * For a partner's webhook receiver: `verify(rawBody, headers, secret)` checks the delivery's
 * `Service-Signature` with packages/webhook-verifier's verify-webhook.ts (compiled into the SDK's
 * build: see tsconfig.json): the HMAC-SHA256 of `<t>.<raw body>`, any `v1` entry matching any of
 * your secrets, so both signatures of a rotation's 24 hours pass, and `t` within 5 minutes of now.
 * It returns the parsed envelope. A refusal throws the verifier's WebhookVerificationError, whose
 * `code` says why; answer such a request 400 and do nothing.
 */
import {
  defaultToleranceSeconds,
  signatureHeaderName,
  verifyWebhook,
  WebhookVerificationError,
  type WebhookEvent,
  type WebhookVerificationErrorCode,
} from "../../webhook-verifier/src/verify-webhook.js";

export { defaultToleranceSeconds, WebhookVerificationError, type WebhookVerificationErrorCode };

/** The envelope of every delivery (snake_case, as sent); `T` types `data.object`. */
export type WebhookEnvelope<T = Record<string, unknown>> = WebhookEvent<T>;

/** Request headers as Node's http module, a fetch `Headers` or a plain object gives them. */
export type IncomingHeaders =
  Headers | Readonly<Record<string, string | readonly string[] | undefined>> | Iterable<readonly [string, string]>;

export interface VerifyWebhookOptions {
  /** Seconds `t` may be from now, either way; default 300 (the spec's 5 minutes). */
  toleranceSeconds?: number;
  /** Now, for tests; default the clock. */
  now?: Date | number;
}

function signatureHeader(headers: IncomingHeaders): string | readonly string[] | undefined {
  if (typeof (headers as Headers).get === "function") return (headers as Headers).get(signatureHeaderName) ?? undefined;
  if (Symbol.iterator in headers) {
    const values = [...(headers as Iterable<readonly [string, string]>)]
      .filter(([name]) => name.toLowerCase() === signatureHeaderName)
      .map(([, value]) => value);
    return values.length === 0 ? undefined : values;
  }
  for (const [name, value] of Object.entries(headers)) {
    if (name.toLowerCase() === signatureHeaderName) return value;
  }
  return undefined;
}

/**
 * Verifies a delivery and returns its envelope. `rawBody` must be the bytes as received (parse
 * JSON only after this); `secret` is the endpoint's `whsec_...` secret, or several while you
 * rotate.
 */
export function verify<T = Record<string, unknown>>(
  rawBody: string | Uint8Array,
  headers: IncomingHeaders,
  secret: string | readonly string[],
  options: VerifyWebhookOptions = {},
): WebhookEnvelope<T> {
  return verifyWebhook<T>({
    payload: rawBody,
    header: signatureHeader(headers),
    secrets: secret,
    ...(options.toleranceSeconds === undefined ? {} : { toleranceSeconds: options.toleranceSeconds }),
    ...(options.now === undefined ? {} : { now: options.now }),
  });
}

import type { NumberCheck } from "../domain/channel.js";

/** The phone-number resource's fields the readiness check reads. */
export const NUMBER_FIELDS =
  "display_phone_number,verified_name,quality_rating,status,name_status,code_verification_status";

export interface NumberReaderOptions {
  /** e.g. https://graph.facebook.com/v21.0 */
  baseUrl: string;
  timeoutMs: number;
}

/** Reads one number with its tenant's token; answers what the Cloud API said, never throws. */
export type NumberReader = (phoneNumberId: string, accessToken: string) => Promise<NumberCheck>;

const text = (value: unknown): string | null => (typeof value === "string" && value !== "" ? value : null);

/**
 * The Cloud API's phone-number resource: `GET /{phone-number-id}?fields=...` with the tenant's
 * bearer token. A 2xx with the fields is a reading; an error object (401 with OAuthException code
 * 190 for a bad token, ...) is a refusal; anything else (connection error, timeout, an answer
 * without an error object) is unreachable, which never changes readiness on its own.
 */
export function createNumberReader(options: NumberReaderOptions): NumberReader {
  const base = options.baseUrl.replace(/\/+$/, "");
  return async (phoneNumberId, accessToken) => {
    let response: Response;
    let body: unknown;
    try {
      response = await fetch(`${base}/${encodeURIComponent(phoneNumberId)}?fields=${NUMBER_FIELDS}`, {
        headers: { authorization: `Bearer ${accessToken}`, accept: "application/json" },
        signal: AbortSignal.timeout(options.timeoutMs),
      });
      body = JSON.parse(await response.text());
    } catch (error) {
      const name = (error as { name?: unknown }).name;
      const code = (error as { cause?: { code?: unknown } }).cause?.code;
      return { kind: "unreachable", reason: name === "TimeoutError" ? "timeout" : `transport:${String(code ?? name)}` };
    }
    const object = (body ?? {}) as Record<string, unknown>;
    if (response.ok) {
      return {
        kind: "read",
        reading: {
          displayPhoneNumber: text(object.display_phone_number),
          verifiedName: text(object.verified_name),
          qualityRating: text(object.quality_rating),
          status: text(object.status),
        },
      };
    }
    const providerCode = (object.error as { code?: unknown } | undefined)?.code;
    if (typeof providerCode === "number" && Number.isInteger(providerCode) && response.status < 500) {
      return { kind: "refused", httpStatus: response.status, providerCode };
    }
    return { kind: "unreachable", reason: `HTTP ${response.status}` };
  };
}

import type { Middleware } from "koa";
import { apiKeyIdOf, verifyApiKey, type ApiKeyRecord } from "../../domain/api-key.js";
import { ApiError } from "../api-error.js";

export interface ApiKeyLookup {
  find(id: string): Promise<ApiKeyRecord | undefined>;
}

const challenge = 'Bearer realm="api"';

/**
 * `Authorization: Bearer <key>`. Missing: 401 auth.key_missing with a challenge; present without
 * the `Bearer ` scheme (the key alone, Basic, ...): 401 auth.scheme_invalid with the challenge and
 * no error code (RFC 6750 3.1: an unsupported method); a Bearer key that is malformed, unknown or
 * revoked: 401 auth.key_invalid, invalid_token. The verified key is left in ctx.state.apiKey.
 */
export function authenticate(keys: ApiKeyLookup): Middleware {
  return async (ctx, next) => {
    const header = ctx.get("authorization");
    if (header === "") {
      throw new ApiError(401, "an API key is required: send Authorization: Bearer <key>", {
        code: "auth.key_missing",
        headers: { "www-authenticate": challenge },
      });
    }
    const invalid = () =>
      new ApiError(401, "the API key is malformed, unknown or revoked", {
        code: "auth.key_invalid",
        headers: { "www-authenticate": `${challenge}, error="invalid_token"` },
      });
    const match = /^bearer +(\S+) *$/i.exec(header);
    if (!match) {
      throw new ApiError(
        401,
        /^bearer\b/i.test(header)
          ? "the Authorization header has no key after Bearer: send Authorization: Bearer <key>"
          : "the Authorization header must be Bearer <key>: the word Bearer and a space come before the key",
        { code: "auth.scheme_invalid", headers: { "www-authenticate": challenge } },
      );
    }
    const presented = match[1]!;
    const id = apiKeyIdOf(presented);
    if (id === undefined) throw invalid();
    let record: ApiKeyRecord | undefined;
    try {
      record = await keys.find(id);
    } catch (error) {
      throw new ApiError(503, "the service is temporarily unavailable; retry with backoff", {
        code: "service.unavailable",
        headers: { "retry-after": "1" },
        cause: error,
      });
    }
    if (!record || !verifyApiKey(presented, record)) throw invalid();
    ctx.state.apiKey = record;
    await next();
  };
}

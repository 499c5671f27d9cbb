import type { Context, Next } from "koa";
import { describe, expect, it } from "vitest";
import { ApiError } from "../api-error.js";
import { authenticate } from "./authenticate.js";

/** Runs the middleware on a request with this Authorization header (no key is ever on record). */
async function rejection(header: string): Promise<ApiError> {
  const ctx = { get: (name: string) => (name === "authorization" ? header : ""), state: {} } as unknown as Context;
  const next: Next = () => Promise.resolve();
  const run = authenticate({ find: () => Promise.resolve(undefined) })(ctx, next) as Promise<void>;
  const error = await run.then(
    () => undefined,
    (caught: unknown) => caught,
  );
  expect(error).toBeInstanceOf(ApiError);
  return error as ApiError;
}

describe("authenticate: which 401 a request without a usable key gets", () => {
  it("tells a missing header (auth.key_missing) from one that is not Bearer <key> (auth.scheme_invalid)", async () => {
    expect((await rejection("")).options.code).toBe("auth.key_missing");
    for (const header of [`sk_live_${"a".repeat(24)}_${"B".repeat(43)}`, "Basic dXNlcjpwYXNz", "Bearer", "Bearer  "]) {
      const error = await rejection(header);
      expect(error, header).toMatchObject({ status: 401, options: { code: "auth.scheme_invalid" } });
      expect(error.message, header).toMatch(/Bearer <key>/);
      // RFC 6750 3.1: no error code for a request that did not use the Bearer method.
      expect(error.options.headers).toEqual({ "www-authenticate": 'Bearer realm="api"' });
    }
  });

  it("keeps auth.key_invalid for a Bearer key that is malformed or unknown", async () => {
    for (const header of ["Bearer sk_live_nope", `bearer sk_live_${"a".repeat(24)}_${"B".repeat(43)}`]) {
      expect((await rejection(header)).options).toMatchObject({
        code: "auth.key_invalid",
        headers: { "www-authenticate": 'Bearer realm="api", error="invalid_token"' },
      });
    }
  });
});

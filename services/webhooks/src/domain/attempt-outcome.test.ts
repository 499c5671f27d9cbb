import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  classifyAttempt,
  classifyTransportError,
  errorClassOf,
  storedResponseBodyBytes,
  truncateResponseBody,
  type AttemptOutcome,
  type AttemptResult,
} from "./attempt-outcome.js";

describe("classifyAttempt", () => {
  it.each<[string, AttemptResult, AttemptOutcome]>([
    ["200", { kind: "response", status: 200 }, { ok: true, statusCode: 200 }],
    ["204", { kind: "response", status: 204 }, { ok: true, statusCode: 204 }],
    ["299", { kind: "response", status: 299 }, { ok: true, statusCode: 299 }],
    ["199", { kind: "response", status: 199 }, { ok: false, reason: "non_2xx_status", statusCode: 199 }],
    ["301", { kind: "response", status: 301 }, { ok: false, reason: "redirect_not_followed", statusCode: 301 }],
    ["308", { kind: "response", status: 308 }, { ok: false, reason: "redirect_not_followed", statusCode: 308 }],
    ["400", { kind: "response", status: 400 }, { ok: false, reason: "non_2xx_status", statusCode: 400 }],
    ["410", { kind: "response", status: 410 }, { ok: false, reason: "non_2xx_status", statusCode: 410 }],
    ["500", { kind: "response", status: 500 }, { ok: false, reason: "non_2xx_status", statusCode: 500 }],
    ["503", { kind: "response", status: 503 }, { ok: false, reason: "non_2xx_status", statusCode: 503 }],
    ["a timeout", { kind: "timeout" }, { ok: false, reason: "timeout", statusCode: null }],
    ["a connection error", { kind: "connection_error" }, { ok: false, reason: "connection_error", statusCode: null }],
    ["a TLS error", { kind: "tls_error" }, { ok: false, reason: "tls_error", statusCode: null }],
    [
      "a forbidden target",
      { kind: "target_not_allowed" },
      { ok: false, reason: "target_not_allowed", statusCode: null },
    ],
  ])("%s", (_label, result, expected) => {
    expect(classifyAttempt(result)).toEqual(expected);
  });
});

function errorWith(fields: { code?: string; name?: string; cause?: unknown }): Error {
  return Object.assign(
    new Error("x", { cause: fields.cause }),
    fields.code ? { code: fields.code } : {},
    fields.name ? { name: fields.name } : {},
  );
}

describe("classifyTransportError", () => {
  it.each([
    ["ECONNREFUSED", errorWith({ code: "ECONNREFUSED" }), "connection_error"],
    ["ECONNRESET", errorWith({ code: "ECONNRESET" }), "connection_error"],
    ["ENOTFOUND", errorWith({ code: "ENOTFOUND" }), "connection_error"],
    ["EHOSTUNREACH", errorWith({ code: "EHOSTUNREACH" }), "connection_error"],
    ["ETIMEDOUT", errorWith({ code: "ETIMEDOUT" }), "timeout"],
    ["an abort by the timeout signal", errorWith({ name: "TimeoutError" }), "timeout"],
    ["an AbortError", errorWith({ name: "AbortError" }), "timeout"],
    ["an expired certificate", errorWith({ code: "CERT_HAS_EXPIRED" }), "tls_error"],
    ["a self-signed certificate", errorWith({ code: "DEPTH_ZERO_SELF_SIGNED_CERT" }), "tls_error"],
    ["a wrong host name", errorWith({ code: "ERR_TLS_CERT_ALTNAME_INVALID" }), "tls_error"],
    ["an SSL alert", errorWith({ code: "ERR_SSL_TLSV1_ALERT_PROTOCOL_VERSION" }), "tls_error"],
    [
      "fetch failed wrapping a refused connection",
      new TypeError("fetch failed", { cause: errorWith({ code: "ECONNREFUSED" }) }),
      "connection_error",
    ],
    [
      "fetch failed wrapping a connect timeout",
      new TypeError("fetch failed", { cause: errorWith({ code: "UND_ERR_CONNECT_TIMEOUT" }) }),
      "timeout",
    ],
    [
      "fetch failed wrapping a TLS failure",
      new TypeError("fetch failed", { cause: errorWith({ code: "CERT_HAS_EXPIRED" }) }),
      "tls_error",
    ],
    ["something unknown", new Error("socket hang up"), "connection_error"],
    ["a thrown string", "boom", "connection_error"],
  ])("%s is a %s", (_label, error, kind) => {
    expect(classifyTransportError(error)).toEqual({ kind });
  });

  it("stops following a cycle of causes", () => {
    const error = new Error("loop") as Error & { cause?: unknown };
    error.cause = error;
    expect(classifyTransportError(error)).toEqual({ kind: "connection_error" });
  });
});

describe("truncateResponseBody", () => {
  const limit = storedResponseBodyBytes;

  it("keeps a body of up to 4096 bytes whole", () => {
    const body = Buffer.alloc(limit, "a");
    expect(truncateResponseBody(body)).toEqual({ body, truncated: false });
    expect(truncateResponseBody(new Uint8Array(0))).toEqual({ body: Buffer.alloc(0), truncated: false });
  });

  it.each([
    ["ASCII", "a".repeat(5000), limit],
    // "é" is 2 bytes: after 4095 ASCII bytes the 4096th byte would be its first half
    ["a 2-byte character across the limit", `${"a".repeat(limit - 1)}é${"b".repeat(10)}`, limit - 1],
    // "€" is 3 bytes starting at byte 4094
    ["a 3-byte character across the limit", `${"a".repeat(limit - 2)}€tail`, limit - 2],
    // "🐾" is 4 bytes starting at byte 4093
    ["a 4-byte character across the limit", `${"a".repeat(limit - 3)}🐾tail`, limit - 3],
    ["a 4-byte character ending exactly at the limit", `${"a".repeat(limit - 4)}🐾tail`, limit],
  ])("cuts %s on a character boundary", (_label, text, expectedLength) => {
    const { body, truncated } = truncateResponseBody(Buffer.from(text, "utf8"));
    expect(truncated).toBe(true);
    expect(body.length).toBe(expectedLength);
    expect(Buffer.from(body.toString("utf8"), "utf8").equals(body)).toBe(true);
  });

  it("never exceeds the limit and always yields a prefix of valid UTF-8 text (property)", () => {
    fc.assert(
      fc.property(fc.string({ unit: "grapheme", maxLength: 3000 }), fc.integer({ min: 1, max: 64 }), (text, small) => {
        const bytes = Buffer.from(text, "utf8");
        const { body, truncated } = truncateResponseBody(bytes, small);
        expect(body.length).toBeLessThanOrEqual(small);
        expect(body.length).toBeGreaterThanOrEqual(Math.min(bytes.length, small) - 3);
        expect(truncated).toBe(bytes.length > small);
        expect(bytes.subarray(0, body.length).equals(body)).toBe(true);
        expect(Buffer.from(body.toString("utf8"), "utf8").equals(body)).toBe(true);
      }),
    );
  });

  it("cuts binary that is not UTF-8 at the full limit", () => {
    const binary = Buffer.alloc(limit + 10, 0x80);
    expect(truncateResponseBody(binary).body.length).toBe(limit);
  });

  it("copies, so the stored body does not change with the caller's buffer", () => {
    const source = Buffer.from("abcdef");
    const { body } = truncateResponseBody(source, 3);
    source[0] = 0x7a;
    expect(body.toString()).toBe("abc");
  });
});

describe("errorClassOf", () => {
  it.each([
    [{ succeeded: true, error: null, statusCode: 200 }, null],
    [{ succeeded: false, error: "timeout", statusCode: null }, "timeout"],
    [{ succeeded: false, error: "tls_error", statusCode: null }, "tls"],
    [{ succeeded: false, error: "target_not_allowed", statusCode: null }, "refused_target"],
    [{ succeeded: false, error: "connection_error", statusCode: null }, "connection"],
    [{ succeeded: false, error: "redirect_not_followed", statusCode: 301 }, "http_3xx"],
    [{ succeeded: false, error: "non_2xx_status", statusCode: 400 }, "http_4xx"],
    [{ succeeded: false, error: "non_2xx_status", statusCode: 499 }, "http_4xx"],
    [{ succeeded: false, error: "non_2xx_status", statusCode: 500 }, "http_5xx"],
    [{ succeeded: false, error: "non_2xx_status", statusCode: 599 }, "http_5xx"],
    [{ succeeded: false, error: "non_2xx_status", statusCode: 102 }, "http_other"],
  ] as const)("%j -> %s", (attempt, errorClass) => {
    expect(errorClassOf(attempt)).toBe(errorClass);
  });
});

import { describe, expect, it } from "vitest";
import { parseIdempotencyKey, parseOptionalIdempotencyKey } from "./idempotency-key.js";

describe("parseIdempotencyKey", () => {
  it.each([
    ["abc-123-x", "abc-123-x"],
    ['"abc-123-x"', "abc-123-x"],
    ["A_b.c:d-12", "A_b.c:d-12"],
    ["x".repeat(128), "x".repeat(128)],
  ])("accepts %j", (header, key) => {
    expect(parseIdempotencyKey(header)).toBe(key);
  });

  it.each([undefined, "", "   "])("requires a key (%j)", (header) => {
    expect(() => parseIdempotencyKey(header)).toThrow(
      expect.objectContaining({ status: 400, options: { code: "request.idempotency_key_required" } }),
    );
  });

  it.each(["short", "x".repeat(129), "has space x", "é-unicode-key", '"unterminated', "a/b/c/d/e/f", '""'])(
    "rejects the malformed %j",
    (header) => {
      expect(() => parseIdempotencyKey(header)).toThrow(
        expect.objectContaining({ status: 400, options: { code: "request.idempotency_key_invalid" } }),
      );
    },
  );
});

describe("parseOptionalIdempotencyKey", () => {
  it("is undefined when the header is absent", () => {
    expect(parseOptionalIdempotencyKey(undefined)).toBeUndefined();
  });

  it.each([
    ["abc-123-x", "abc-123-x"],
    ['"abc-123-x"', "abc-123-x"],
  ])("accepts %j", (header, key) => {
    expect(parseOptionalIdempotencyKey(header)).toBe(key);
  });

  it.each(["", "  ", "short", "two-keys-1, two-keys-2", ["two-keys-1", "two-keys-2"]])(
    "rejects the present but malformed %j",
    (header) => {
      expect(() => parseOptionalIdempotencyKey(header)).toThrow(
        expect.objectContaining({ status: 400, options: { code: "request.idempotency_key_invalid" } }),
      );
    },
  );
});

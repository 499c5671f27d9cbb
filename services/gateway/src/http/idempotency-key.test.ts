import { describe, expect, it } from "vitest";
import { parseIdempotencyKey } from "./idempotency-key.js";

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

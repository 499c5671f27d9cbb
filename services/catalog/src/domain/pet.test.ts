import { describe, expect, it } from "vitest";
import { InvalidPetError, parseInt64, validateIdempotencyKey, validateNewPet } from "./pet.js";

describe("validateNewPet", () => {
  it("defaults status to available and trims the name", () => {
    expect(validateNewPet({ name: "  Rex ", categoryId: "7", status: undefined })).toEqual({
      name: "Rex",
      categoryId: "7",
      status: "available",
    });
  });

  it("keeps a given status", () => {
    expect(validateNewPet({ name: "Rex", categoryId: "1", status: "sold" }).status).toBe("sold");
  });

  it.each([
    ["", "name must not be empty"],
    ["   ", "name must not be empty"],
    ["a".repeat(201), "name must be at most 200 characters"],
    ["bad\u0000name", "name must not contain control characters"],
    ["\ud800", "name must be well-formed Unicode"],
    ["Rex\udc00", "name must be well-formed Unicode"],
    ["\ude00\ud83d", "name must be well-formed Unicode"],
  ])("rejects the name %j", (name, message) => {
    expect(() => validateNewPet({ name, categoryId: "1", status: undefined })).toThrow(message);
  });

  it("accepts surrogate pairs (astral characters) as well-formed", () => {
    expect(validateNewPet({ name: "Rex \ud83d\udc36", categoryId: "1", status: undefined }).name).toBe("Rex 🐶");
  });

  it("counts the name in code points, not UTF-16 units", () => {
    const emoji = "🐶".repeat(200); // 400 UTF-16 units, 200 code points
    expect(validateNewPet({ name: emoji, categoryId: "1", status: undefined }).name).toBe(emoji);
  });

  it.each(["0", "-1", "abc", "1.5", "9223372036854775808", "01"])("rejects categoryId %j", (categoryId) => {
    expect(() => validateNewPet({ name: "Rex", categoryId, status: undefined })).toThrow(InvalidPetError);
  });

  it("accepts the largest int64 category", () => {
    expect(validateNewPet({ name: "Rex", categoryId: "9223372036854775807", status: undefined }).categoryId).toBe(
      "9223372036854775807",
    );
  });

  it("names every problem at once", () => {
    expect(() => validateNewPet({ name: " ", categoryId: "0", status: undefined })).toThrow(
      new InvalidPetError("name must not be empty; categoryId must be a positive 64-bit integer"),
    );
  });

  it("carries a stable code and kind", () => {
    try {
      validateNewPet({ name: "", categoryId: "1", status: undefined });
      expect.unreachable();
    } catch (error) {
      expect(error).toMatchObject({ code: "pet.invalid", kind: "invalid_argument" });
    }
  });
});

describe("validateIdempotencyKey", () => {
  it("treats an empty key as none", () => {
    expect(validateIdempotencyKey("", "")).toBeUndefined();
    expect(validateIdempotencyKey("", "key_1")).toBeUndefined();
  });

  it("accepts the public syntax with a scope", () => {
    expect(validateIdempotencyKey("A_b.c:d-12", "key_1")).toEqual({ key: "A_b.c:d-12", scope: "key_1" });
  });

  it.each([
    ["short", "key_1"],
    ["x".repeat(129), "key_1"],
    ["has space x", "key_1"],
    ["long-enough-key", ""],
  ])("rejects key %j in scope %j", (key, scope) => {
    expect(() => validateIdempotencyKey(key, scope)).toThrow(
      expect.objectContaining({ code: "idempotency.invalid_key", kind: "invalid_argument" }),
    );
  });
});

describe("parseInt64", () => {
  it.each([
    ["0", 0n],
    ["42", 42n],
    ["-7", -7n],
    ["9223372036854775807", 9223372036854775807n],
    ["-9223372036854775808", -9223372036854775808n],
  ])("parses %s", (text, value) => {
    expect(parseInt64(text)).toBe(value);
  });

  it.each(["", "+1", "1e3", " 1", "007", "9223372036854775808", "-9223372036854775809", "0x10"])(
    "rejects %j",
    (text) => {
      expect(parseInt64(text)).toBeUndefined();
    },
  );
});

import { describe, expect, it } from "vitest";
import type { Pet } from "./pet.js";
import { decodePageToken, encodePageToken, InvalidPageError, resolvePageSize, toPage } from "./pet-page.js";

const pets = (ids: number[]): Pet[] =>
  ids.map((id) => ({ id: String(id), name: `p${id}`, categoryId: "1", status: "available" }));

describe("resolvePageSize", () => {
  it("uses 20 when not given", () => expect(resolvePageSize(0)).toBe(20));
  it.each([1, 20, 100])("accepts %i", (n) => expect(resolvePageSize(n)).toBe(n));
  it.each([-1, 101, 1.5])("rejects %d rather than clamping", (n) => {
    expect(() => resolvePageSize(n)).toThrow(InvalidPageError);
  });
});

describe("page tokens", () => {
  it("round-trip the last id for the same filter", () => {
    expect(decodePageToken(encodePageToken("41", "sold"), "sold")).toBe("41");
    expect(decodePageToken(encodePageToken("41", undefined), undefined)).toBe("41");
  });

  it("are opaque base64url", () => {
    expect(encodePageToken("41", undefined)).toMatch(/^[A-Za-z0-9_-]+$/);
  });

  it("are refused for another filter than the one they were issued for", () => {
    expect(() => decodePageToken(encodePageToken("41", "sold"), "pending")).toThrow(InvalidPageError);
    expect(() => decodePageToken(encodePageToken("41", "sold"), undefined)).toThrow(InvalidPageError);
  });

  it.each([
    "not base64!",
    Buffer.from("{").toString("base64url"),
    Buffer.from("[]").toString("base64url"),
    Buffer.from(JSON.stringify({ v: 2, a: "1", s: null })).toString("base64url"),
    Buffer.from(JSON.stringify({ v: 1, a: "x", s: null })).toString("base64url"),
    Buffer.from(JSON.stringify({ v: 1, a: "1", s: "lost" })).toString("base64url"),
    "a".repeat(201),
  ])("refuses the forged token %j with a stable code", (token) => {
    expect(() => decodePageToken(token, undefined)).toThrow(
      expect.objectContaining({ code: "page.invalid_cursor", kind: "invalid_argument" }),
    );
  });
});

describe("toPage", () => {
  it("returns everything and no token when the lookahead row is absent", () => {
    expect(toPage(pets([1, 2]), { limit: 2, status: undefined, afterId: undefined })).toEqual({
      pets: pets([1, 2]),
      nextPageToken: undefined,
    });
  });

  it("drops the lookahead row and points the token at the last returned id", () => {
    const page = toPage(pets([1, 2, 3]), { limit: 2, status: "available", afterId: undefined });
    expect(page.pets.map((p) => p.id)).toEqual(["1", "2"]);
    expect(decodePageToken(page.nextPageToken!, "available")).toBe("2");
  });
});

import { describe, expect, it } from "vitest";
import {
  decodeTranscriptCursor,
  encodeTranscriptCursor,
  resolveTranscriptLimit,
  toTranscriptPage,
  TranscriptCursorInvalidError,
} from "./transcript-page.js";

describe("transcript paging", () => {
  it("defaults the limit and refuses anything outside 1-100", () => {
    expect(resolveTranscriptLimit(0)).toBe(20);
    expect(resolveTranscriptLimit(1)).toBe(1);
    expect(resolveTranscriptLimit(100)).toBe(100);
    for (const bad of [101, -1, 1.5]) expect(() => resolveTranscriptLimit(bad)).toThrow(/from 1 to 100/);
  });

  it("round-trips a cursor and refuses anything it did not issue", () => {
    expect(decodeTranscriptCursor(encodeTranscriptCursor("42"))).toBe("42");
    expect(decodeTranscriptCursor("")).toBeUndefined();
    for (const bad of ["x", Buffer.from("s:0").toString("base64url"), Buffer.from("s:-1").toString("base64url")]) {
      expect(() => decodeTranscriptCursor(bad)).toThrow(TranscriptCursorInvalidError);
    }
  });

  it("cuts a lookahead read into a page and the cursor after its last entry", () => {
    const entries = ["9", "8", "7"].map((seq) => ({ seq }));
    expect(toTranscriptPage(entries, 2)).toEqual({
      entries: entries.slice(0, 2),
      nextCursor: encodeTranscriptCursor("8"),
    });
    expect(toTranscriptPage(entries, 3)).toEqual({ entries, nextCursor: "" });
  });
});

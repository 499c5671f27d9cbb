import { describe, expect, it } from "vitest";
import { decodeSeqCursor, encodeSeqCursor, resolvePageLimit, toSeqPage, PageCursorInvalidError } from "./seq-page.js";

describe("transcript paging", () => {
  it("defaults the limit and refuses anything outside 1-100", () => {
    expect(resolvePageLimit(0)).toBe(20);
    expect(resolvePageLimit(1)).toBe(1);
    expect(resolvePageLimit(100)).toBe(100);
    for (const bad of [101, -1, 1.5]) expect(() => resolvePageLimit(bad)).toThrow(/from 1 to 100/);
  });

  it("round-trips a cursor and refuses anything it did not issue", () => {
    expect(decodeSeqCursor(encodeSeqCursor("42"))).toBe("42");
    expect(decodeSeqCursor("")).toBeUndefined();
    for (const bad of ["x", Buffer.from("s:0").toString("base64url"), Buffer.from("s:-1").toString("base64url")]) {
      expect(() => decodeSeqCursor(bad)).toThrow(PageCursorInvalidError);
    }
  });

  it("cuts a lookahead read into a page and the cursor after its last entry", () => {
    const entries = ["9", "8", "7"].map((seq) => ({ seq }));
    expect(toSeqPage(entries, 2)).toEqual({
      entries: entries.slice(0, 2),
      nextCursor: encodeSeqCursor("8"),
    });
    expect(toSeqPage(entries, 3)).toEqual({ entries, nextCursor: "" });
  });
});

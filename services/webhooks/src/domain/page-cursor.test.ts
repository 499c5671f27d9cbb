import { describe, expect, it } from "vitest";
import { decodeCursor, encodeCursor, InvalidPageRequestError, pageSize } from "./page-cursor.js";

describe("page cursor", () => {
  it("round-trips a sequence number and treats empty as the first page", () => {
    expect(decodeCursor(encodeCursor(42))).toBe(42);
    expect(decodeCursor(encodeCursor("9007199254740991"))).toBe(9007199254740991);
    expect(decodeCursor("")).toBeUndefined();
  });

  it.each(["x", "czow", "czotMQ", "czoxMg==", "czoxMg ", "%%%", Buffer.from("s:01").toString("base64url")])(
    "refuses the cursor %j with request.invalid",
    (cursor) => {
      expect(() => decodeCursor(cursor)).toThrow(InvalidPageRequestError);
      try {
        decodeCursor(cursor);
      } catch (error) {
        expect((error as InvalidPageRequestError).code).toBe("request.invalid");
      }
    },
  );

  it("takes 0 as the default page size and refuses sizes outside 1-100", () => {
    expect(pageSize(0)).toBe(20);
    expect(pageSize(1)).toBe(1);
    expect(pageSize(100)).toBe(100);
    for (const bad of [-1, 101, 1.5]) expect(() => pageSize(bad)).toThrow(/limit must be/);
  });
});

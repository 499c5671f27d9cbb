import { describe, expect, it } from "vitest";
import { formUtcTime } from "./form-time.js";

describe("a console form's time (the recover form's since, the message log's range)", () => {
  it("reads a datetime-local value as UTC and keeps a zoned RFC 3339 time", () => {
    expect(formUtcTime("2026-11-24T10:30")).toBe("2026-11-24T10:30:00.000Z");
    expect(formUtcTime("2026-11-24T10:30:15")).toBe("2026-11-24T10:30:15.000Z");
    expect(formUtcTime("2026-11-24T10:30:00+01:00")).toBe("2026-11-24T09:30:00.000Z");
    expect(formUtcTime("2026-11-24T10:30:00.000Z")).toBe("2026-11-24T10:30:00.000Z");
  });

  it("refuses anything else", () => {
    for (const value of ["", "yesterday", "2026-11-24", "2026-13-40T99:99", "1700000000"]) {
      expect(formUtcTime(value)).toBeUndefined();
    }
  });
});

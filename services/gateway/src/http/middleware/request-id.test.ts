import { describe, expect, it } from "vitest";
import { resolveRequestId } from "./request-id.js";

describe("resolveRequestId", () => {
  it.each(["abc", "A-Z.a_z:0-9", "x".repeat(128)])("keeps the safe id %j", (id) => {
    expect(resolveRequestId(id)).toBe(id);
  });

  it.each([undefined, "", "x".repeat(129), "a b", "é", "a\nb", "a/b", '"quoted"'])("replaces %j", (id) => {
    const resolved = resolveRequestId(id);
    expect(resolved).not.toBe(id);
    expect(resolved).toMatch(/^req_[0-9a-f]{32}$/);
  });
});

import { describe, expect, it } from "vitest";
import { actorOf } from "./actor.js";

describe("actorOf", () => {
  it("trims, treats empty as none, keeps identifier-like actors", () => {
    expect(actorOf(undefined)).toBeNull();
    expect(actorOf("  ")).toBeNull();
    expect(actorOf(" console:ana@example.com ")).toBe("console:ana@example.com");
    expect(actorOf("key:key_0123/x+y")).toBe("key:key_0123/x+y");
    expect(actorOf("a".repeat(128))).toBe("a".repeat(128));
  });

  it.each(["a".repeat(129), "a\nb", "Ana Lopez", "<script>"])("refuses %j with request.invalid", (actor) => {
    expect(() => actorOf(actor)).toThrow(expect.objectContaining({ code: "request.invalid" }) as Error);
  });
});

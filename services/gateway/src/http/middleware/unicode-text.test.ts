import { describe, expect, it } from "vitest";
import { illFormedTextFields, isWellFormedText } from "./unicode-text.js";

describe("isWellFormedText", () => {
  it.each(["", "Rex", "Rex 🐶", "\ud83d\udc36", "é ß 中文", "\ufffd"])("accepts %j", (text) => {
    expect(isWellFormedText(text)).toBe(true);
  });

  it.each(["\ud800", "a\udc00", "\udc36\ud83d", "🐶\ud83d"])("rejects %j", (text) => {
    expect(isWellFormedText(text)).toBe(false);
  });
});

describe("illFormedTextFields", () => {
  it("finds nothing in well-formed JSON", () => {
    expect(illFormedTextFields(JSON.parse('{"name":"Rex \\ud83d\\udc36","tags":["a"],"n":1,"x":null}'))).toEqual([]);
  });

  it("names each field with a lone surrogate, nested or in arrays", () => {
    const body = JSON.parse(
      '{"name":"\\ud800","ok":"fine","owner":{"city":"x\\udfff"},"tags":["a","\\udc00"]}',
    ) as unknown;
    expect(illFormedTextFields(body)).toEqual(["name", "owner.city", "tags[1]"]);
  });

  it("names a key that is not well-formed without echoing the surrogate itself", () => {
    const [field] = illFormedTextFields(JSON.parse('{"a":{"\\ud800x":1}}'));
    expect(field).toBe("the key of a.\\ud800x");
    expect(isWellFormedText(field!)).toBe(true);
  });

  it("reports a bare string body", () => {
    expect(illFormedTextFields("\ud800")).toEqual(["the body"]);
  });

  it("walks very deep nesting without overflowing the stack", () => {
    const depth = 200_000;
    const deep = JSON.parse(`${"[".repeat(depth)}"\\ud800"${"]".repeat(depth)}`) as unknown;
    const [field] = illFormedTextFields(deep);
    expect(field).toBe(`${"[0]".repeat(depth).slice(0, 100)}…`); // cut short: the answer stays small
  });

  it("lists at most five fields", () => {
    expect(illFormedTextFields(Array.from({ length: 50 }, () => "\ud800"))).toHaveLength(5);
  });
});

import { describe, expect, it } from "vitest";
import { z } from "zod";
import { ApiError } from "./api-error.js";
import { mustBe, parseShape, problemsOf } from "./request-shape.js";

const shape = z.strictObject(
  {
    name: z.string(mustBe("a string")),
    tags: z.array(z.string(mustBe("an array of strings")), mustBe("an array of strings")).optional(),
    owner: z.object({ id: z.string(mustBe("a string")) }, { error: "must be an object" }).optional(),
  },
  { error: "the request body must be a JSON object" },
);

const problems = (input: unknown) => {
  const result = shape.safeParse(input);
  return result.success ? [] : problemsOf(result.error.issues);
};

describe("request shapes", () => {
  it("names unknown members first, then one problem per member in declaration order", () => {
    expect(problems({ owner: { id: 1 }, tags: [1, 2], extra: true })).toEqual([
      '"extra" is not a member of this request',
      "name is required",
      "tags must be an array of strings",
      "owner.id must be a string",
    ]);
  });

  it("names a body that is no object on its own", () => {
    expect(problems([])).toEqual(["the request body must be a JSON object"]);
    expect(problems(null)).toEqual(["the request body must be a JSON object"]);
  });

  it("answers the surface's refusal with every problem in one detail", () => {
    const refuse = (detail: string) => new ApiError(400, detail, { code: "request.invalid" });
    expect(() => parseShape(shape, { name: 1, owner: 2 }, refuse)).toThrow(
      "name must be a string; owner must be an object",
    );
    expect(parseShape(shape, { name: "x" }, refuse)).toEqual({ name: "x" });
  });
});

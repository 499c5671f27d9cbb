import { readdir, readFile } from "node:fs/promises";
import { describe, expect, it } from "vitest";
import { generate, generatedDir } from "../codegen/generate.js";
import { problemCodes } from "../src/generated/codes.js";
import type { components } from "../src/generated/tenant.js";

describe("packages/sdk/src/generated", () => {
  it("is identical to what `npm run -s generate:sdk` produces from the served OpenAPI documents and the code catalogue", async () => {
    const fresh = await generate();
    expect((await readdir(generatedDir)).sort()).toEqual(Object.keys(fresh).sort());
    for (const [name, content] of Object.entries(fresh)) {
      const committed = await readFile(`${generatedDir}/${name}`, "utf8");
      expect(committed === content, `src/generated/${name} is stale: run npm run -s generate:sdk`).toBe(true);
    }
  }, 60_000);

  it("holds an entry with advice for every problem code the tenant document declares, and no other", () => {
    // Type level: the document's ProblemCode union and the table's keys are the same set.
    type DocumentCode = components["schemas"]["ProblemCode"];
    type TableCode = keyof typeof problemCodes;
    const both: [DocumentCode] extends [TableCode] ? ([TableCode] extends [DocumentCode] ? true : false) : false = true;
    expect(both).toBe(true);
    expect(problemCodes["partner.action_outcome_unknown"]).toMatchObject({ status: 409 });
    expect(problemCodes["partner.action_outcome_unknown"].advice).toMatch(/transcript/);
  });
});

import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { codeCatalogue } from "../src/index.js";
import { catalogueMarkdown } from "../src/markdown.js";
import { repoRoot } from "./code-scan.js";

const docPath = join(repoRoot, "docs/errors.md");
const begin = "<!-- BEGIN GENERATED: packages/codes catalogueMarkdown() -->";
const end = "<!-- END GENERATED -->";

/** docs/errors.md with its generated part replaced by the catalogue as it is now. */
function regenerated(doc: string): string {
  const from = doc.indexOf(begin);
  const to = doc.indexOf(end);
  if (from < 0 || to < from) throw new Error(`docs/errors.md lacks the markers ${begin} ... ${end}`);
  return `${doc.slice(0, from + begin.length)}\n\n${catalogueMarkdown()}\n\n${doc.slice(to)}`;
}

describe("docs/errors.md", () => {
  it("is the catalogue as it is (UPDATE_ERRORS_DOC=1 npx vitest run packages/codes/test/errors-doc.test.ts rewrites it)", () => {
    const doc = readFileSync(docPath, "utf8");
    if (process.env.UPDATE_ERRORS_DOC === "1") writeFileSync(docPath, regenerated(doc));
    expect(readFileSync(docPath, "utf8")).toBe(regenerated(doc));
  });

  it("lists every code of the catalogue", () => {
    const doc = readFileSync(docPath, "utf8");
    const missing = Object.keys(codeCatalogue).filter((code) => !doc.includes(`| \`${code}\` |`));
    expect(missing).toEqual([]);
  });
});

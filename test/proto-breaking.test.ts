/**
 * `buf breaking` against the last proto release (releases.json; proto/buf.yaml's `breaking` rules,
 * FILE): the tree's contracts must keep every wire and generated-code promise that release made,
 * so a service built from it still talks to the others. The check is shown to bite: a copy of
 * the tree with a renumbered field, or a removed RPC, is refused.
 */
import { execFile } from "node:child_process";
import { cp, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { latestRelease, readReleases, type Release } from "@platform/local-stack/releases";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

const run = promisify(execFile);
const repo = join(import.meta.dirname, "..");
const buf = join(repo, "node_modules", ".bin", "buf");

interface BreakingResult {
  code: number;
  /** buf's findings, one JSON object a line (--error-format json). */
  findings: { path: string; type: string; message: string }[];
}

async function breaking(input: string, against: string): Promise<BreakingResult> {
  const result = await run(buf, ["breaking", input, "--against", against, "--error-format", "json"], { cwd: repo })
    .then(({ stdout }) => ({ code: 0, stdout }))
    .catch((error: { code: number; stdout: string; stderr: string }) => {
      if (typeof error.code !== "number" || error.code !== 100) throw error; // 100: breaking changes found
      return { code: error.code, stdout: error.stdout };
    });
  const findings = result.stdout
    .split("\n")
    .filter((line) => line.trim() !== "")
    .map((line) => JSON.parse(line) as BreakingResult["findings"][number]);
  return { code: result.code, findings };
}

describe("buf breaking against the last proto release", () => {
  let scratch: string;
  let release: Release;
  /** The last release's proto/ module, as `git archive` exports it. */
  let against: string;

  beforeAll(async () => {
    release = latestRelease(await readReleases(repo), "proto");
    scratch = await mkdtemp(join(tmpdir(), "proto-breaking-"));
    await run("sh", ["-c", `git archive --format=tar ${release.commit} proto | tar -x -C "${scratch}"`], { cwd: repo });
    against = join(scratch, "proto");
    console.log(`buf breaking against proto ${release.version} (${release.commit.slice(0, 12)})`);
  });
  afterAll(() => rm(scratch, { recursive: true, force: true }));

  it("finds nothing in this tree's contracts", async () => {
    expect(await breaking("proto", against)).toEqual({ code: 0, findings: [] });
  });

  /** A copy of this tree's proto module with one file changed. */
  const changed = async (name: string, file: string, change: (text: string) => string) => {
    const copy = join(scratch, name);
    await cp(join(repo, "proto"), copy, {
      recursive: true,
      filter: (source) => !/\/(node_modules|dist|gen)(\/|$)/.test(source.slice(repo.length)),
    });
    const path = join(copy, file);
    const text = await readFile(path, "utf8");
    const next = change(text);
    expect(next, "the change applies").not.toBe(text);
    await writeFile(path, next);
    return copy;
  };

  it("refuses a field whose number changed", async () => {
    const copy = await changed("renumbered", "catalog/v1/catalog.proto", (text) =>
      text.replace("  string name = 2;", "  string name = 12;"),
    );
    const result = await breaking(copy, against);
    expect(result.code).toBe(100);
    expect(result.findings.map((f) => [f.type, f.message])).toContainEqual([
      "FIELD_NO_DELETE",
      'Previously present field "2" with name "name" on message "Pet" was deleted.',
    ]);
    expect(result.findings.every((f) => f.path.endsWith("catalog/v1/catalog.proto"))).toBe(true);
  });

  it("refuses a removed RPC", async () => {
    const copy = await changed("rpc-removed", "catalog/v1/catalog.proto", (text) =>
      text.replace("  rpc GetPet(GetPetRequest) returns (GetPetResponse);\n", ""),
    );
    const result = await breaking(copy, against);
    expect(result.code).toBe(100);
    expect(result.findings.map((f) => [f.type, f.message])).toEqual([
      ["RPC_NO_DELETE", 'Previously present RPC "GetPet" on service "CatalogService" was deleted.'],
    ]);
  });
});

import { execFile } from "node:child_process";
import { mkdtemp, readdir, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import { promisify } from "node:util";
import { afterAll, describe, expect, it } from "vitest";

const run = promisify(execFile);
const root = join(import.meta.dirname, "..");
const protoDir = join(root, "proto");
const bin = join(root, "node_modules", ".bin");
const env = { ...process.env, PATH: `${bin}:${process.env.PATH ?? ""}` };

async function listFiles(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { recursive: true, withFileTypes: true });
  return entries
    .filter((e) => e.isFile())
    .map((e) => relative(dir, join(e.parentPath, e.name)))
    .sort();
}

describe("proto contracts", () => {
  const scratch = mkdtemp(join(tmpdir(), "buf-gen-"));
  afterAll(async () => rm(await scratch, { recursive: true, force: true }));

  it("pass buf lint", async () => {
    const result = await run(join(bin, "buf"), ["lint"], { cwd: protoDir, env });
    expect(result.stdout + result.stderr).toBe("");
  });

  it("have committed generated code identical to what `npm run generate` produces", async () => {
    const out = await scratch;
    await run(join(bin, "buf"), ["generate", "--output", out], { cwd: protoDir, env });
    const committed = await listFiles(join(protoDir, "gen"));
    const fresh = await listFiles(join(out, "gen"));
    expect(committed).toEqual(fresh);
    for (const file of fresh) {
      const [want, have] = await Promise.all([
        readFile(join(out, "gen", file), "utf8"),
        readFile(join(protoDir, "gen", file), "utf8"),
      ]);
      expect(have, `proto/gen/${file} is stale: run npm run generate`).toBe(want);
    }
  });
});

/**
 * packages/sdk is ready to publish: what `npm pack` puts in the tarball (the built JavaScript and
 * declarations, README and package.json; no tests, sources, source maps or generator), the
 * tarball works on its own outside this repository (no runtime dependency), the version is semver
 * and released in releases.json, and the README's quick start type-checks against the built types.
 */
import { execFile } from "node:child_process";
import { mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import { promisify } from "node:util";
import semver from "semver";
import { afterAll, describe, expect, it } from "vitest";
import { quickStart } from "./quick-start.js";

const run = promisify(execFile);
const sdk = join(import.meta.dirname, "..");
const repo = join(sdk, "..", "..");
const manifest = JSON.parse(await readFile(join(sdk, "package.json"), "utf8")) as {
  name: string;
  version: string;
  private?: boolean;
  dependencies?: Record<string, string>;
  exports: Record<string, { types: string; default: string }>;
};

/** The modules of src/ (generated ones included), as the build names them. */
async function sourceModules(): Promise<string[]> {
  const entries = await readdir(join(sdk, "src"), { recursive: true, withFileTypes: true });
  return entries
    .filter((e) => e.isFile() && e.name.endsWith(".ts"))
    .map((e) => relative(sdk, join(e.parentPath, e.name)).replace(/\.ts$/, ""));
}

describe("the @platform/sdk package", () => {
  const scratch = mkdtemp(join(tmpdir(), "sdk-pack-"));
  afterAll(async () => rm(await scratch, { recursive: true, force: true }));

  it("packs exactly the built JavaScript and declarations, the verifier it compiles in, README and package.json", async () => {
    const { stdout } = await run("npm", ["pack", "--dry-run", "--json", "--ignore-scripts"], { cwd: sdk });
    const [pack] = JSON.parse(stdout) as { name: string; version: string; files: { path: string }[] }[];
    expect(pack).toMatchObject({ name: "@platform/sdk", version: manifest.version });
    const built = (await sourceModules()).flatMap((m) => [`dist/sdk/${m}.js`, `dist/sdk/${m}.d.ts`]);
    const expected = [
      "README.md",
      "package.json",
      ...built,
      "dist/webhook-verifier/src/verify-webhook.js",
      "dist/webhook-verifier/src/verify-webhook.d.ts",
    ];
    expect(pack!.files.map((f) => f.path).sort()).toEqual(expected.sort());
  });

  it("is publishable: public, semver, no runtime dependency, released in releases.json at its version", async () => {
    expect(manifest.private).toBeUndefined();
    expect(semver.valid(manifest.version)).toBe(manifest.version);
    expect(manifest.dependencies ?? {}).toEqual({});
    expect(manifest.exports["."]).toEqual({ types: "./dist/sdk/src/index.d.ts", default: "./dist/sdk/src/index.js" });
    const releases = JSON.parse(await readFile(join(repo, "releases.json"), "utf8")) as {
      releases: Record<string, { version: string }[]>;
    };
    expect(releases.releases.sdk?.map((r) => r.version)).toContain(manifest.version);
  });

  it("works from its tarball alone, outside the repository", async () => {
    const dir = await scratch;
    const { stdout } = await run("npm", ["pack", "--json", "--ignore-scripts", "--pack-destination", dir], {
      cwd: sdk,
    });
    const [pack] = JSON.parse(stdout) as { filename: string }[];
    await run("tar", ["xzf", join(dir, pack!.filename), "-C", dir]);
    const entry = join(dir, "package", "dist", "sdk", "src", "index.js");
    const probe = join(dir, "probe.mjs");
    await writeFile(
      probe,
      `const sdk = await import(${JSON.stringify(entry)});\n` +
        `const client = sdk.createClient({ baseUrl: "http://127.0.0.1:9", apiKey: "k" });\n` +
        `console.log(typeof client.webhooks.verify, typeof client.tenant.items, Object.keys(sdk.problemCodes).length);\n`,
    );
    const result = await run(process.execPath, [probe], { cwd: dir });
    const [verify, items, codes] = result.stdout.trim().split(" ");
    expect([verify, items]).toEqual(["function", "function"]);
    expect(Number(codes)).toBeGreaterThan(40);
  });

  it("has a README quick start of ten lines that type-checks under --strict against the built types", async () => {
    const code = quickStart(await readFile(join(sdk, "README.md"), "utf8"));
    expect(code.trimEnd().split("\n")).toHaveLength(10);
    const dir = await mkdtemp(join(sdk, "dist", "quick-start-check-"));
    try {
      const file = join(dir, "quick-start.ts");
      await writeFile(file, code);
      const tsc = join(repo, "node_modules", ".bin", "tsc");
      const args = ["--noEmit", "--strict", "--module", "nodenext", "--target", "es2022", "--types", "node", file];
      const result = await run(tsc, args, { cwd: sdk }).catch((error: { stdout: string }) => error);
      expect(result.stdout).toBe("");
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  }, 60_000);
});

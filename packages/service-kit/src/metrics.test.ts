import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createMetricsRegistry, readBuildInfo } from "./metrics.js";

describe("the build a process reports", () => {
  let dir: string;
  let entry: string;
  beforeAll(async () => {
    // A service's layout: package.json beside dist/src/main.js, which has none of its own.
    dir = await mkdtemp(join(tmpdir(), "build-info-"));
    await mkdir(join(dir, "svc", "dist", "src"), { recursive: true });
    await writeFile(join(dir, "svc", "package.json"), JSON.stringify({ name: "@platform/svc", version: "2.3.4" }));
    entry = pathToFileURL(join(dir, "svc", "dist", "src", "main.js")).href;
  });
  afterAll(() => rm(dir, { recursive: true, force: true }));

  it("reads the version of the nearest package.json above the entry point, and BUILD_REVISION", () => {
    expect(readBuildInfo(entry, { BUILD_REVISION: "abc123" })).toEqual({ version: "2.3.4", revision: "abc123" });
  });

  it("says revision unknown when BUILD_REVISION is missing or blank", () => {
    expect(readBuildInfo(entry, {})).toEqual({ version: "2.3.4", revision: "unknown" });
    expect(readBuildInfo(entry, { BUILD_REVISION: " " })).toEqual({ version: "2.3.4", revision: "unknown" });
  });

  it("refuses a package.json without a version", async () => {
    await mkdir(join(dir, "bare", "dist"), { recursive: true });
    await writeFile(join(dir, "bare", "package.json"), "{}");
    expect(() => readBuildInfo(pathToFileURL(join(dir, "bare", "dist", "main.js")).href, {})).toThrow(/has no version/);
  });

  it("reads this service kit's own version from its package.json", () => {
    expect(readBuildInfo(import.meta.url, {}).version).toBe("0.1.0");
  });

  it("exposes platform_build_info{service,version,revision} 1, only when given a build", async () => {
    const text = await createMetricsRegistry("catalog", { version: "2.3.4", revision: "abc123" }).metrics();
    expect(text.split("\n").filter((line) => line.startsWith("platform_build_info"))).toEqual([
      'platform_build_info{version="2.3.4",revision="abc123",service="catalog"} 1',
    ]);
    expect(await createMetricsRegistry("catalog").metrics()).not.toContain("platform_build_info");
  });
});

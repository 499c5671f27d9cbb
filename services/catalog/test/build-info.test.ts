/**
 * A service says which build it is: the catalog process, started as its image starts it (with
 * BUILD_REVISION set), exposes platform_build_info with its package.json version and that revision
 * on /metrics, and its configuration and listening lines carry both.
 */
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { createScratchDatabase, type ScratchDatabase } from "@platform/local-stack/postgres-databases";
import { startServiceProcess } from "@platform/local-stack/service-process";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

const root = join(import.meta.dirname, "..");

describe("the catalog process reports its build", () => {
  let scratch: ScratchDatabase;
  beforeAll(async () => {
    scratch = await createScratchDatabase("catalogbuild");
  });
  afterAll(async () => scratch?.drop());

  it("on /metrics (platform_build_info) and in its start-up lines", async () => {
    const { version } = JSON.parse(await readFile(join(root, "package.json"), "utf8")) as { version: string };
    expect(version).toMatch(/^\d+\.\d+\.\d+$/);
    const revision = "0123456789abcdef0123456789abcdef01234567";
    const catalog = await startServiceProcess({
      name: "catalog",
      entry: join(root, "dist", "src", "main.js"),
      env: {
        DATABASE_URL: scratch.url,
        GRPC_HOST: "127.0.0.1",
        GRPC_PORT: "0",
        METRICS_PORT: "0",
        BUILD_REVISION: revision,
      },
    });
    try {
      const body = await (await fetch(`http://127.0.0.1:${catalog.listening.metricsPort as number}/metrics`)).text();
      const lines = body.split("\n").filter((line) => line.startsWith("platform_build_info"));
      expect(lines).toEqual([`platform_build_info{version="${version}",revision="${revision}",service="catalog"} 1`]);
      expect(body).toContain("# TYPE platform_build_info gauge");
      expect(catalog.listening).toMatchObject({ msg: "listening", service: "catalog", version, revision });
      expect(catalog.logs.find((line) => line.msg === "configuration")).toMatchObject({ version, revision });
    } finally {
      await catalog.stop();
    }
  });
});

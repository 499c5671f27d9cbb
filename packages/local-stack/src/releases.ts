/**
 * The releases file (releases.json at the repository root): per component (each service, and the
 * proto contracts) every release, oldest first, with its version, the commit of main it was cut
 * from and the day it was recorded. Git tags never reach CI, so this file is the record that
 * checks against "the last release" read (buf breaking, the previous-release build, migrations).
 * How a release is cut: docs/operations.md, "Releases".
 */
import { execFile } from "node:child_process";
import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { promisify } from "node:util";
import { STACK_SERVICES, type StackServiceName } from "./stack-environment.js";

const run = promisify(execFile);

/** The services (the stack's), each with its own image, version and chart annotation. */
export const releasedServices = STACK_SERVICES;
export type ReleasedService = StackServiceName;
/** What has releases: the services, the proto contracts and the partner SDK (packages/sdk, an npm package). */
export const releasedComponents = [...releasedServices, "proto", "sdk"] as const;
export type ReleasedComponent = (typeof releasedComponents)[number];

export interface Release {
  version: string;
  /** A full commit id of main's history. */
  commit: string;
  /** The day the release was recorded, YYYY-MM-DD (UTC). */
  date: string;
}

export interface ReleasesFile {
  description: string;
  releases: Record<ReleasedComponent, Release[]>;
}

export const releasesPath = (repo: string) => join(repo, "releases.json");

/** The package.json that carries a component's version. */
export const manifestPath = (repo: string, component: ReleasedComponent) =>
  join(repo, workspaceOf(component), "package.json");

/** The workspace folder of a component. */
export const workspaceOf = (component: ReleasedComponent) =>
  component === "proto" ? "proto" : component === "sdk" ? "packages/sdk" : `services/${component}`;

const isService = (component: ReleasedComponent): component is ReleasedService =>
  (releasedServices as readonly string[]).includes(component);

export const chartPath = (repo: string) => join(repo, "deploy", "helm", "platform", "Chart.yaml");

/** The Chart.yaml annotation holding a service's version (its image tag's default). */
export const chartAnnotation = (service: ReleasedService) => `platform/${service}-version`;

const SEMVER = /^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)$/;
const COMMIT = /^[0-9a-f]{40}$/;
const DATE = /^\d{4}-\d{2}-\d{2}$/;

export function isReleasedComponent(name: string): name is ReleasedComponent {
  return (releasedComponents as readonly string[]).includes(name);
}

/** -1, 0 or 1 as `a` is lower than, equal to or higher than `b` (MAJOR.MINOR.PATCH only). */
export function compareVersions(a: string, b: string): number {
  const parse = (v: string) => {
    const match = SEMVER.exec(v);
    if (!match) throw new Error(`"${v}" is not a version (MAJOR.MINOR.PATCH)`);
    return match.slice(1).map(Number);
  };
  const [x, y] = [parse(a), parse(b)];
  for (let i = 0; i < 3; i++) if (x[i]! !== y[i]!) return x[i]! < y[i]! ? -1 : 1;
  return 0;
}

/** Checks the file's shape: every component present, versions strictly increasing, full commit ids. */
export function validateReleases(file: unknown): ReleasesFile {
  const problems: string[] = [];
  const value = file as Partial<ReleasesFile> | null;
  if (typeof value !== "object" || value === null || typeof value.releases !== "object" || value.releases === null)
    throw new Error("releases.json: expected an object with `releases`");
  for (const name of Object.keys(value.releases))
    if (!isReleasedComponent(name)) problems.push(`unknown component "${name}"`);
  for (const component of releasedComponents) {
    const list = (value.releases as Partial<Record<string, Release[]>>)[component];
    if (!Array.isArray(list) || list.length === 0) {
      problems.push(`${component}: no release`);
      continue;
    }
    list.forEach((release, i) => {
      const at = `${component}[${i}]`;
      if (!SEMVER.test(release.version)) problems.push(`${at}: version "${release.version}" is not MAJOR.MINOR.PATCH`);
      if (!COMMIT.test(release.commit)) problems.push(`${at}: commit "${release.commit}" is not a full commit id`);
      if (!DATE.test(release.date)) problems.push(`${at}: date "${release.date}" is not YYYY-MM-DD`);
      const keys = Object.keys(release).sort().join(",");
      if (keys !== "commit,date,version") problems.push(`${at}: fields ${keys}, expected commit, date, version`);
      const before = list[i - 1];
      if (before && SEMVER.test(before.version) && SEMVER.test(release.version))
        if (compareVersions(before.version, release.version) >= 0)
          problems.push(`${at}: ${release.version} does not follow ${before.version}`);
    });
  }
  if (problems.length > 0) throw new Error(`releases.json:\n  ${problems.join("\n  ")}`);
  return value as ReleasesFile;
}

export async function readReleases(repo: string): Promise<ReleasesFile> {
  return validateReleases(JSON.parse(await readFile(releasesPath(repo), "utf8")));
}

/** A component's last release. */
export function latestRelease(file: ReleasesFile, component: ReleasedComponent): Release {
  const last = file.releases[component].at(-1);
  if (!last) throw new Error(`releases.json has no release of ${component}`);
  return last;
}

/** The release before the last one, if any: what a "previous release" check compares with once a release is cut. */
export function previousRelease(file: ReleasesFile, component: ReleasedComponent): Release | undefined {
  return file.releases[component].at(-2);
}

export async function readManifestVersion(repo: string, component: ReleasedComponent): Promise<string> {
  return (JSON.parse(await readFile(manifestPath(repo, component), "utf8")) as { version: string }).version;
}

/** A component's package.json version as it was at `commit`. */
export async function manifestVersionAt(repo: string, component: ReleasedComponent, commit: string): Promise<string> {
  const path = manifestPath("", component).replace(/^\//, "");
  const { stdout } = await run("git", ["show", `${commit}:${path}`], { cwd: repo });
  return (JSON.parse(stdout) as { version: string }).version;
}

/** The services' versions as Chart.yaml's annotations state them. */
export async function readChartVersions(repo: string): Promise<Partial<Record<ReleasedService, string>>> {
  const text = await readFile(chartPath(repo), "utf8");
  const versions: Partial<Record<ReleasedService, string>> = {};
  for (const service of releasedServices) {
    const match = new RegExp(`^\\s+${chartAnnotation(service)}:\\s*"?([^"\\s]+)"?\\s*$`, "m").exec(text);
    if (match) versions[service] = match[1];
  }
  return versions;
}

/**
 * Chart.yaml with a service's annotation set to `version`. Only that line changes (the rest of the
 * file, comments included, is kept); the annotation must already be there.
 */
export function setChartVersion(text: string, service: ReleasedService, version: string): string {
  const line = new RegExp(`^(\\s+${chartAnnotation(service)}:).*$`, "m");
  if (!line.test(text)) throw new Error(`Chart.yaml has no annotation ${chartAnnotation(service)}`);
  return text.replace(line, `$1 "${version}"`);
}

/** package.json text with its top-level version replaced, everything else kept. */
export function setManifestVersion(text: string, version: string): string {
  const line = /^( {2}"version": )"[^"]*"/m;
  if (!line.test(text)) throw new Error("package.json has no top-level version");
  return text.replace(line, `$1"${version}"`);
}

/**
 * Sets a component's version in its package.json and in package-lock.json (its workspace entry),
 * and for proto also in every workspace's exact `@platform/proto` dependency, so `npm ci` (which
 * the images run) still finds the workspace instead of asking the registry for the old version.
 */
export async function bumpVersion(repo: string, component: ReleasedComponent, from: string, to: string): Promise<void> {
  const edit = async (path: string, change: (text: string) => string) => {
    const text = await readFile(path, "utf8");
    const changed = change(text);
    if (changed !== text) await writeFile(path, changed);
  };
  const workspace = workspaceOf(component);
  const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&");
  const dependency = new RegExp(`("@platform/proto": )"${escape(from)}"`, "g");
  await edit(manifestPath(repo, component), (text) => setManifestVersion(text, to));
  await edit(join(repo, "package-lock.json"), (text) => {
    const entry = new RegExp(`("${escape(workspace)}": \\{\\n\\s+"name": "[^"]+",\\n\\s+"version": )"${escape(from)}"`);
    if (!entry.test(text)) throw new Error(`package-lock.json has no ${workspace} entry at ${from}`);
    const next = text.replace(entry, `$1"${to}"`);
    return component === "proto" ? next.replace(dependency, `$1"${to}"`) : next;
  });
  if (component === "proto") {
    const { stdout } = await run("git", ["ls-files", "--", "package.json", "*/package.json"], { cwd: repo });
    for (const path of stdout.split("\n").filter(Boolean))
      await edit(join(repo, path), (text) => text.replace(dependency, `$1"${to}"`));
  }
}

async function git(repo: string, ...args: string[]): Promise<string> {
  return (await run("git", args, { cwd: repo })).stdout.trim();
}

export type ReleaseStep =
  | { step: "bumped"; component: ReleasedComponent; version: string; from: string; next: string }
  | { step: "recorded"; component: ReleasedComponent; version: string; commit: string; next: string };

/**
 * `npm run -s release -- <component> <version>`, in two steps, each followed by a commit:
 *
 * 1. The component's package.json is behind `version`: it is set to `version` (the code of the
 *    release must report it: its build_info reads that file). Commit that with the code.
 * 2. The package.json at HEAD already says `version` and the tree is clean: HEAD is the release.
 *    It is appended to releases.json, and (for a service) Chart.yaml's annotation is set to it,
 *    so the chart deploys it by default. Commit that as the follow-up commit naming the release.
 */
export async function cutRelease(
  repo: string,
  component: ReleasedComponent,
  version: string,
  today = new Date().toISOString().slice(0, 10),
): Promise<ReleaseStep> {
  const file = await readReleases(repo);
  const last = latestRelease(file, component);
  if (compareVersions(version, last.version) <= 0)
    throw new Error(`${component} ${version} is not above its last release ${last.version}`);
  const current = await readManifestVersion(repo, component);
  if (current !== version) {
    if (compareVersions(version, current) < 0)
      throw new Error(`${component}'s package.json says ${current}, above ${version}`);
    await bumpVersion(repo, component, current, version);
    return {
      step: "bumped",
      component,
      version,
      from: current,
      next: `commit the code of ${component} ${version}, then run the same command again to record the release`,
    };
  }
  const dirty = await git(repo, "status", "--porcelain", "--untracked-files=no");
  if (dirty !== "") throw new Error(`the work tree has uncommitted changes; commit them first:\n${dirty}`);
  if ((await manifestVersionAt(repo, component, "HEAD")) !== version)
    throw new Error(`${component}'s package.json at HEAD does not say ${version}; commit it first`);
  const commit = await git(repo, "rev-parse", "HEAD");
  file.releases[component].push({ version, commit, date: today });
  await writeFile(releasesPath(repo), `${JSON.stringify(file, null, 2)}\n`);
  // The repository's formatting (npm run lint checks it).
  await run(join(repo, "node_modules", ".bin", "prettier"), ["--write", releasesPath(repo)], { cwd: repo });
  if (isService(component)) {
    const service = component;
    await writeFile(chartPath(repo), setChartVersion(await readFile(chartPath(repo), "utf8"), service, version));
  }
  return {
    step: "recorded",
    component,
    version,
    commit,
    next: `git commit -am "release ${component} ${version} (${commit.slice(0, 12)})"`,
  };
}

/**
 * The release of `service` that this tree's build must run beside (the one a rollout of this tree
 * replaces, or a rollback returns to): its last release, unless HEAD's code of the service is that
 * release's code (the release was just recorded), then the one before it, if any.
 */
export async function baselineRelease(repo: string, file: ReleasesFile, service: ReleasedService): Promise<Release> {
  const last = latestRelease(file, service);
  const before = previousRelease(file, service);
  if (!before) return last;
  const unchanged = await run(
    "git",
    ["diff", "--quiet", last.commit, "HEAD", "--", `services/${service}`, "packages", "proto"],
    {
      cwd: repo,
    },
  ).then(
    () => true,
    (error: { code?: number }) => {
      if (error.code === 1) return false;
      throw error as Error;
    },
  );
  return unchanged ? before : last;
}

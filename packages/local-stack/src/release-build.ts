/**
 * An earlier build of this repository, from a commit of its history (a release of releases.json,
 * or a commit a benchmark compares with): exported with `git archive` into
 * .data/release-builds/<commit> (git-ignored), installed with `npm ci` of the services asked for
 * (`--workspace` each: their dependencies and their workspaces', at the commit's lockfile, not the
 * root's tools) and compiled with `tsc -b --noCheck` for them; later calls reuse it. The
 * release-compatibility test and the benchmarks' same-run A/B both use it.
 */
import { execFile } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdir, readFile, rename, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { promisify } from "node:util";

const run = promisify(execFile);

export interface ReleaseBuild {
  /** The full commit id. */
  commit: string;
  /** The exported tree, built: its services/<svc>/dist/src/main.js are ready to start. */
  root: string;
  /** What this call cost: 0 when the cache had it, else the milliseconds of each step. */
  built: { exportMs: number; installMs: number; compileMs: number } | undefined;
  /** A service's compiled entry point (main.js, or another file of its dist/src). */
  entry(service: string, file?: string): string;
}

export interface ReleaseBuildOptions {
  /** Where builds are kept, one folder per commit: .data/release-builds unless told. */
  cacheDir?: string;
  /** Told each step as it starts (a first build takes a minute or more). */
  log?: (line: string) => void;
}

/** Which services' workspaces a build installed (a build without this file installed them all). */
const installedFile = ".release-build-installed.json";

/**
 * The tree of `ref` (a commit of this checkout's history) built for `services`. The install and
 * compile happen in a scratch folder renamed into place at the end, so an interrupted build is
 * never mistaken for a finished one; a build that lacks a service compiles just that one (after
 * installing the services it now needs, when it installed fewer).
 */
export async function releaseBuild(
  repo: string,
  ref: string,
  services: string[],
  options: ReleaseBuildOptions = {},
): Promise<ReleaseBuild> {
  const log = options.log ?? (() => undefined);
  const commit = (await run("git", ["rev-parse", "--verify", `${ref}^{commit}`], { cwd: repo })).stdout.trim();
  await run("git", ["merge-base", "--is-ancestor", commit, "HEAD"], { cwd: repo }).catch(() => {
    throw new Error(`${ref} (${commit}) is not in this checkout's history; name a commit of main`);
  });
  const cacheDir = options.cacheDir ?? join(repo, ".data", "release-builds");
  const root = join(cacheDir, commit.slice(0, 12));
  const entry = (service: string, file = "main.js") => join(root, "services", service, "dist", "src", file);
  const missing = (dir: string) =>
    services.filter((service) => !existsSync(join(dir, "services", service, "dist", "src", "main.js")));
  // --noCheck: the commit's code was type-checked on main; what is wanted here is its JavaScript,
  // which tsc emits the same without checking it again (half the compile, or less). The tree's own
  // compiler when its services declare one, else this checkout's (the root's tools are not installed).
  const compile = async (dir: string, which: string[]) => {
    const own = join(dir, "node_modules", "typescript", "bin", "tsc");
    const tsc = existsSync(own) ? own : join(repo, "node_modules", "typescript", "bin", "tsc");
    await run(process.execPath, [tsc, "-b", "--noCheck", ...which.map((service) => `services/${service}`)], {
      cwd: dir,
      maxBuffer: 64 * 1024 * 1024,
    });
  };
  // npm ci of just these services' workspaces (no linters, bundlers or CDK): for notify and
  // webhooks 102 packages and 100 MB instead of 417 and 585 MB, a third of the CPU; what they run
  // with is still what the commit's lockfile says.
  const install = async (dir: string, which: string[]) => {
    await run(
      "npm",
      [
        "ci",
        ...which.flatMap((service) => ["--workspace", `services/${service}`]),
        ...["--prefer-offline", "--no-audit", "--no-fund", "--ignore-scripts"],
      ],
      { cwd: dir, maxBuffer: 64 * 1024 * 1024 },
    );
    await writeFile(join(dir, installedFile), JSON.stringify(which));
  };
  if (existsSync(join(root, "node_modules"))) {
    const todo = missing(root);
    if (todo.length === 0) return { commit, root, built: undefined, entry };
    let installMs = 0;
    if (existsSync(join(root, installedFile))) {
      const installed = JSON.parse(await readFile(join(root, installedFile), "utf8")) as string[];
      const needed = [...new Set([...installed, ...services])];
      if (needed.length > installed.length) {
        log(`installing ${needed.join(", ")} of ${commit.slice(0, 12)} under ${root}`);
        const started = Date.now();
        await install(root, needed);
        installMs = Date.now() - started;
      }
    }
    log(`compiling ${todo.join(", ")} of ${commit.slice(0, 12)} under ${root}`);
    const started = Date.now();
    await compile(root, todo);
    return { commit, root, built: { exportMs: 0, installMs, compileMs: Date.now() - started }, entry };
  }
  log(
    `building ${commit.slice(0, 12)} under ${root} (once: git archive, npm ci of ${services.join(", ")}, tsc -b --noCheck)`,
  );
  const scratch = `${root}.partial-${process.pid}`;
  await rm(scratch, { recursive: true, force: true });
  await mkdir(scratch, { recursive: true });
  try {
    let started = Date.now();
    await run("sh", ["-c", `git archive --format=tar ${commit} | tar -x -C "${scratch}"`], { cwd: repo });
    const exportMs = Date.now() - started;
    started = Date.now();
    await install(scratch, services);
    const installMs = Date.now() - started;
    started = Date.now();
    await compile(scratch, services);
    const compileMs = Date.now() - started;
    if (missing(scratch).length > 0)
      throw new Error(`${commit} built, but not every service's main.js is there: ${missing(scratch).join(", ")}`);
    await rm(root, { recursive: true, force: true });
    await rename(scratch, root);
    return { commit, root, built: { exportMs, installMs, compileMs }, entry };
  } catch (error) {
    await rm(scratch, { recursive: true, force: true });
    throw error;
  }
}

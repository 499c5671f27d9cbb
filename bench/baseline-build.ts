/**
 * An earlier build of this repository, for a same-run A/B: the commit is named by a git ref that
 * this checkout's history holds (a commit of main, e.g. the one before a restructuring), exported
 * with `git archive` into .data/bench-baseline/<commit> (git-ignored), installed with `npm ci` and
 * compiled once; later runs reuse it.
 */
import { execFile } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdir, rm } from "node:fs/promises";
import { join } from "node:path";
import { promisify } from "node:util";

const run = promisify(execFile);

export interface BaselineBuild {
  /** The full commit id. */
  commit: string;
  /** The exported tree, built: its services/<svc>/dist/src/main.js are ready to start. */
  root: string;
}

export async function baselineBuild(repo: string, ref: string, services: string[]): Promise<BaselineBuild> {
  const commit = (await run("git", ["rev-parse", "--verify", `${ref}^{commit}`], { cwd: repo })).stdout.trim();
  await run("git", ["merge-base", "--is-ancestor", commit, "HEAD"], { cwd: repo }).catch(() => {
    throw new Error(`${ref} (${commit}) is not in this checkout's history; name a commit of main`);
  });
  const root = join(repo, ".data", "bench-baseline", commit.slice(0, 12));
  const built = () =>
    services.every((service) => existsSync(join(root, "services", service, "dist", "src", "main.js")));
  if (built()) return { commit, root };
  console.error(`[bench] building the baseline ${commit.slice(0, 12)} under ${root} (once)`);
  await rm(root, { recursive: true, force: true });
  await mkdir(root, { recursive: true });
  await run("sh", ["-c", `git archive --format=tar ${commit} | tar -x -C "${root}"`], { cwd: repo });
  await run("npm", ["ci", "--no-audit", "--no-fund", "--ignore-scripts"], {
    cwd: root,
    maxBuffer: 64 * 1024 * 1024,
  });
  await run("npx", ["tsc", "-b", ...services.map((service) => `services/${service}`)], {
    cwd: root,
    maxBuffer: 64 * 1024 * 1024,
  });
  if (!built()) throw new Error(`the baseline ${commit} built, but not every service's main.js is there`);
  return { commit, root };
}

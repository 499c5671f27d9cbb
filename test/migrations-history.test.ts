/**
 * Migrations are history: every migration a release shipped is still in the tree, byte for byte
 * (a database that ran it must stay describable by the code), and a new one sorts after all of
 * them (knex applies in name order; one inserted before an applied one would never run where the
 * release is deployed). Checked against every release of every service in releases.json; shown to
 * bite on an edited, a removed and an inserted migration.
 */
import { execFile } from "node:child_process";
import { readdir, readFile } from "node:fs/promises";
import { join } from "node:path";
import { promisify } from "node:util";
import { readReleases, releasedServices } from "@platform/local-stack/releases";
import { describe, expect, it } from "vitest";

const run = promisify(execFile);
const repo = join(import.meta.dirname, "..");

/** A service's migration files (not index.ts), by file name: their text. */
type Migrations = Map<string, string>;

async function migrationsAt(commit: string, service: string): Promise<Migrations> {
  const dir = `services/${service}/migrations/`;
  const { stdout } = await run("git", ["ls-tree", "--name-only", commit, dir], { cwd: repo });
  const files = stdout.split("\n").filter((path) => path.endsWith(".ts") && !path.endsWith("/index.ts"));
  const migrations: Migrations = new Map();
  for (const path of files)
    migrations.set(
      path.slice(dir.length),
      (await run("git", ["show", `${commit}:${path}`], { cwd: repo, maxBuffer: 1 << 24 })).stdout,
    );
  return migrations;
}

async function migrationsInTree(service: string): Promise<Migrations> {
  const dir = join(repo, "services", service, "migrations");
  const files = (await readdir(dir)).filter((name) => name.endsWith(".ts") && name !== "index.ts");
  return new Map(
    await Promise.all(files.map(async (name) => [name, await readFile(join(dir, name), "utf8")] as const)),
  );
}

/** What is wrong with `now` as the continuation of a release's migrations `then`. */
function historyProblems(then: Migrations, now: Migrations): string[] {
  const problems: string[] = [];
  for (const [name, text] of then) {
    if (!now.has(name)) problems.push(`${name} was removed`);
    else if (now.get(name) !== text) problems.push(`${name} was changed`);
  }
  const last = [...then.keys()].sort().at(-1) ?? "";
  for (const name of now.keys())
    if (!then.has(name) && name < last) problems.push(`${name} is new but sorts before ${last}, which was released`);
  return problems;
}

describe("migrations against every release", () => {
  it("keeps each released migration unchanged and adds new ones after them", async () => {
    const file = await readReleases(repo);
    let checked = 0;
    for (const service of releasedServices) {
      const now = await migrationsInTree(service);
      for (const release of file.releases[service]) {
        const then = await migrationsAt(release.commit, service);
        expect(then.size, `${service} ${release.version} has migrations`).toBeGreaterThan(0);
        expect(historyProblems(then, now), `${service} ${release.version}`).toEqual([]);
        checked += then.size;
      }
    }
    expect(checked).toBeGreaterThanOrEqual(12);
  });

  it("refuses an edited, a removed and an inserted migration", async () => {
    const then = await migrationsAt((await readReleases(repo)).releases.notify[0]!.commit, "notify");
    const now = new Map(then);
    now.set("20261122000000_create_tenants.ts", `${then.get("20261122000000_create_tenants.ts")!}// edited\n`);
    now.delete("20261123000000_create_outbox.ts");
    now.set("20261122050000_rename_in_the_past.ts", "");
    now.set("20991231000000_later.ts", "");
    expect(historyProblems(then, now)).toEqual([
      "20261122000000_create_tenants.ts was changed",
      "20261123000000_create_outbox.ts was removed",
      "20261122050000_rename_in_the_past.ts is new but sorts before 20261123030000_create_projections.ts, which was released",
    ]);
  });
});

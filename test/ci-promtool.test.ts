/**
 * `.ci/install-promtool` (called by `.ci/run`), run for real with a stand-in `apt-get` on a PATH
 * without promtool: it installs Debian's `prometheus` package only when promtool is missing,
 * refreshes the package index only when the install fails without it, and keeps the prometheus
 * daemon from starting (a policy-rc.d answering 101 in place during the install, removed after
 * when it placed it, left alone when one was already there).
 */
import { execFile } from "node:child_process";
import { chmod, mkdir, mkdtemp, readFile, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterEach, beforeEach, describe, expect, it } from "vitest";

const run = promisify(execFile);
const script = join(import.meta.dirname, "..", ".ci", "install-promtool");

let dir: string;
let bin: string;
let log: string;
let policy: string;

/**
 * A fake apt-get: logs each call with the policy-rc.d it sees (content, or "none"); `install`
 * fails until an `update` ran when `stale` exists, else puts a promtool on PATH.
 */
const fakeAptGet = (stale: boolean) => `#!/bin/bash
state="${"$"}(cat "${"$"}POLICY_RC_D" 2>/dev/null | tr '\\n' ' ' || true)"
echo "apt-get $* | policy: ${"$"}{state:-none}" >> "${"$"}FAKE_LOG"
if [ "$1" = update ]; then touch "${"$"}FAKE_DIR/updated"; exit 0; fi
if ${stale ? "true" : "false"} && [ ! -e "${"$"}FAKE_DIR/updated" ]; then echo "E: Unable to locate package prometheus" >&2; exit 100; fi
printf '#!/bin/sh\\necho "promtool, version 2.42.0+ds"\\n' > "${"$"}FAKE_BIN/promtool"
chmod +x "${"$"}FAKE_BIN/promtool"
`;

async function install(stale: boolean) {
  await writeFile(join(bin, "apt-get"), fakeAptGet(stale));
  await chmod(join(bin, "apt-get"), 0o755);
  const env = { PATH: bin, POLICY_RC_D: policy, FAKE_LOG: log, FAKE_DIR: dir, FAKE_BIN: bin };
  const { stdout } = await run("/bin/bash", [script], { env });
  const calls = (await readFile(log, "utf8").catch(() => "")).split("\n").filter(Boolean);
  return { stdout, calls };
}

const exists = (path: string) =>
  readFile(path).then(
    () => true,
    () => false,
  );

describe(".ci/install-promtool", () => {
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), "install-promtool-"));
    bin = join(dir, "bin");
    log = join(dir, "apt.log");
    policy = join(dir, "policy-rc.d");
    await mkdir(bin);
    // The few programs the script and the fake use, without the real promtool's directory.
    for (const tool of ["cat", "chmod", "rm", "touch", "tr"]) await symlink(`/usr/bin/${tool}`, join(bin, tool));
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it("installs Debian's prometheus package, with every service start refused meanwhile", async () => {
    const { stdout, calls } = await install(false);
    expect(calls).toEqual(["apt-get install -y --no-install-recommends prometheus | policy: #!/bin/sh exit 101 "]);
    expect(stdout).toContain("promtool, version 2.42.0+ds");
    expect(await exists(policy)).toBe(false);
  });

  it("refreshes the package index only when the install fails without it", async () => {
    const { calls } = await install(true);
    expect(calls.map((c) => c.split(" | ")[0])).toEqual([
      "apt-get install -y --no-install-recommends prometheus",
      "apt-get update",
      "apt-get install -y --no-install-recommends prometheus",
    ]);
    expect(await exists(policy)).toBe(false);
  });

  it("leaves a policy-rc.d that was already there", async () => {
    await writeFile(policy, "#!/bin/sh\nexit 101\n# the image's own\n");
    const { calls } = await install(false);
    expect(calls).toHaveLength(1);
    expect(await readFile(policy, "utf8")).toBe("#!/bin/sh\nexit 101\n# the image's own\n");
  });

  it("does nothing when promtool is already on PATH", async () => {
    await writeFile(join(bin, "promtool"), "#!/bin/sh\necho present\n");
    await chmod(join(bin, "promtool"), 0o755);
    const { stdout, calls } = await install(false);
    expect(calls).toEqual([]);
    expect(stdout).toBe("");
  });
});

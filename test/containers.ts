// Debian's buildah and podman (with runc), as test/images.test.ts drives them: each call resolves
// with its exit code and output instead of throwing, so a test asserts on both.
import { execFile, execFileSync } from "node:child_process";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

export interface Outcome {
  code: number;
  stdout: string;
  stderr: string;
}

/** Whether this machine has the container tools (.ci/install-image-tools installs them). */
export function containerToolsPresent(): boolean {
  try {
    for (const tool of ["buildah", "podman", "runc"]) execFileSync(tool, ["--version"], { stdio: "ignore" });
    return true;
  } catch {
    return false;
  }
}

// The containers' resource limits. podman's default (nofile 1048576) is above what a sandboxed
// machine lets even root set, and runc then refuses to start any container ("error setting
// rlimits for ready process"); these are what a Node service needs, and every host allows them.
const configDir = mkdtempSync(join(tmpdir(), "containers-conf-"));
writeFileSync(
  join(configDir, "containers.conf"),
  '[containers]\ndefault_ulimits = ["nofile=4096:4096", "nproc=4096:4096"]\n',
);
const environment = { ...process.env, CONTAINERS_CONF: join(configDir, "containers.conf") };

function tool(command: string, args: string[], timeoutMs: number): Promise<Outcome> {
  return new Promise((resolve) => {
    execFile(
      command,
      args,
      { env: environment, maxBuffer: 64 * 1024 * 1024, timeout: timeoutMs, killSignal: "SIGKILL" },
      (error, stdout, stderr) => {
        const code = error === null ? 0 : typeof error.code === "number" ? error.code : -1;
        resolve({ code, stdout, stderr: error && code === -1 ? `${stderr}\n${error.message}` : stderr });
      },
    );
  });
}

export const buildah = (args: string[], timeoutMs = 600_000): Promise<Outcome> => tool("buildah", args, timeoutMs);
/**
 * `buildah bud` at the lowest CPU and I/O priority (nice 19, best-effort class 7), its RUN steps
 * (npm ci, tsc) included: a build is batch work, and the test files running beside it on the
 * machine's other worker (the console in Chromium, the crash tests) wait on timers. At normal
 * priority two builds at once took both cores of a 2-core CI machine from them.
 */
export const buildInBackground = (args: string[], timeoutMs = 600_000): Promise<Outcome> =>
  tool("nice", ["-n", "19", "ionice", "-c", "2", "-n", "7", "buildah", "bud", ...args], timeoutMs);
export const podman = (args: string[], timeoutMs = 120_000): Promise<Outcome> => tool("podman", args, timeoutMs);

/** Throws with the tool's output unless it exited 0; else its stdout, trimmed. */
export function ok(outcome: Outcome, what: string): string {
  if (outcome.code !== 0) {
    throw new Error(`${what} exited ${outcome.code}:\n${outcome.stderr.slice(-4000)}\n${outcome.stdout.slice(-2000)}`);
  }
  return outcome.stdout.trim();
}

/**
 * The flags that run a container the way the chart's pods run (deploy/helm/platform/templates/
 * _helpers.tpl, podSecurityContext and containerSecurityContext): uid and gid 1000, a read-only
 * root with an empty /tmp, no capabilities, no privilege escalation. The host's network: the
 * tests' Postgres and NATS listen on its loopback.
 */
export const POD_SECURITY = [
  "--user=1000:1000",
  "--read-only",
  "--tmpfs=/tmp:rw,size=64m",
  "--cap-drop=all",
  "--security-opt=no-new-privileges",
  "--network=host",
];

/** `--env NAME=value` for each entry. */
export const envFlags = (env: Record<string, string>): string[] =>
  Object.entries(env).flatMap(([name, value]) => ["--env", `${name}=${value}`]);

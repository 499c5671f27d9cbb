import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";

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

describe.each(services)("services/%s/Dockerfile", (service) => {
  const text = readFileSync(join(root, "services", service, "Dockerfile"), "utf8");
  const [build, runtime, ...rest] = stages(text);

  it("is multi-stage: a build stage and a runtime stage", () => {
    expect(rest).toHaveLength(0);
    expect(build!.from).toMatch(/^FROM node:20[\w.-]* AS build$/);
    expect(runtime!.from).toMatch(/^FROM node:20[\w.-]*-slim AS runtime$/);
    expect(build!.lines).toContain(`RUN npx tsc -b services/${service}`);
  });

  it("runs as a non-root user", () => {
    const users = runtime!.lines.filter((l) => l.startsWith("USER "));
    expect(users).toHaveLength(1);
    expect(users[0]).not.toMatch(/^USER (root|0)(:|$)/);
    expect(runtime!.lines.indexOf(users[0]!)).toBeLessThan(runtime!.lines.findIndex((l) => l.startsWith("CMD ")));
  });

  it("installs only this service's production dependencies", () => {
    const installs = runtime!.lines.filter((l) => l.startsWith("RUN npm ci"));
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

  it("copies every workspace manifest so npm ci can check the lockfile", () => {
    const workspaces = (JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as { workspaces: string[] })
      .workspaces;
    for (const stage of [build!, runtime!]) {
      for (const dir of workspaces) expect(stage.lines).toContain(`COPY ${dir}/package.json ${dir}/`);
    }
  });

  it("starts the service's compiled entry point", () => {
    expect(runtime!.lines.at(-1)).toBe(`CMD ["node", "services/${service}/dist/src/main.js"]`);
    expect(existsSync(join(root, "services", service, "src", "main.ts"))).toBe(true);
  });
});

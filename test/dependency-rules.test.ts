import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { cruise, type ICruiseOptions } from "dependency-cruiser";
import extractDepcruiseOptions from "dependency-cruiser/config-utl/extract-depcruise-options";
import extractTSConfig from "dependency-cruiser/config-utl/extract-ts-config";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

// The repository's own rules (.dependency-cruiser.js, run by `npm run deps`) cruised over small
// trees written to a scratch directory: each tree breaks one rule, and the rule reports it.

const root = join(import.meta.dirname, "..");

/** A tree of source files: path (relative to the tree's root) to content. */
type Tree = Record<string, string>;

interface Finding {
  rule: string;
  from: string;
  to: string;
}

let options: ICruiseOptions;
let scratch: string;
let trees = 0;

beforeAll(async () => {
  options = await extractDepcruiseOptions(join(root, ".dependency-cruiser.js"));
  scratch = await mkdtemp(join(tmpdir(), "dependency-rules-"));
});
afterAll(async () => rm(scratch, { recursive: true, force: true }));

/** Writes the tree, cruises it with the repository's rules and returns what they report. */
async function violations(tree: Tree): Promise<Finding[]> {
  const baseDir = join(scratch, String(trees++));
  for (const [path, content] of Object.entries(tree)) {
    await mkdir(dirname(join(baseDir, path)), { recursive: true });
    await writeFile(join(baseDir, path), content);
  }
  const tops = [...new Set(Object.keys(tree).map((path) => path.split("/")[0]!))];
  const tsConfigFile = join(root, "tsconfig.base.json");
  const result = await cruise(
    tops,
    { ...options, baseDir, tsConfig: { fileName: tsConfigFile } },
    {},
    { tsConfig: extractTSConfig(tsConfigFile) },
  );
  if (typeof result.output === "string") throw new Error(`expected a cruise result, got ${result.output}`);
  // A relative import the cruise could not follow would make a tree prove nothing.
  const lost = result.output.modules.flatMap((m) =>
    m.dependencies
      .filter((d) => d.couldNotResolve && d.module.startsWith("."))
      .map((d) => `${m.source} -> ${d.module}`),
  );
  if (lost.length > 0) throw new Error(`unresolved relative imports: ${lost.join(", ")}`);
  return result.output.summary.violations.map((v) => ({ rule: v.rule.name, from: v.from, to: v.to }));
}

/** A small, correctly layered service: main.ts > grpc/ and events/ > db/ > domain/. */
const layeredService: Tree = {
  "services/a/src/main.ts": [
    'import { config } from "./config.js";',
    'import { serve } from "./grpc/pet-service.js";',
    'import { project } from "./events/projector.js";',
    "serve(config.limit);",
    "project();",
  ].join("\n"),
  "services/a/src/config.ts":
    'import { defaultLimit } from "./domain/pet.js";\nexport const config = { limit: defaultLimit };\n',
  "services/a/src/grpc/pet-service.ts": [
    'import { listPets } from "../db/pet-store.js";',
    'import { project } from "../events/projector.js";',
    "export const serve = (limit: number) => { listPets(limit); project(); };",
  ].join("\n"),
  // events/ reads config.ts, which sits beside main.ts (which imports grpc/): no folder cycle.
  "services/a/src/events/projector.ts": [
    'import { config } from "../config.js";',
    'import { listPets } from "../db/pet-store.js";',
    "export const project = () => listPets(config.limit);",
  ].join("\n"),
  "services/a/src/db/pet-store.ts":
    'import { clampLimit } from "../domain/pet.js";\nexport const listPets = (n: number) => clampLimit(n);\n',
  "services/a/src/domain/pet.ts": [
    'import { randomUUID } from "node:crypto";',
    'import { ValidationError } from "@platform/service-kit/errors";',
    "export const defaultLimit = 20;",
    "export const clampLimit = (n: number) => { if (n < 1) throw new ValidationError(randomUUID()); return n; };",
  ].join("\n"),
  // A test beside the domain may set up through db/: the layering binds the code it tests.
  "services/a/src/domain/pet.test.ts": 'import { listPets } from "../db/pet-store.js";\nlistPets(1);\n',
  "services/a/test/pets.test.ts": 'import { serve } from "../src/grpc/pet-service.js";\nserve(1);\n',
  "services/b/src/main.ts":
    'import { pageSize } from "../../../packages/kit/src/paging.js";\nexport const size = pageSize;\n',
  "packages/kit/src/paging.ts": "export const pageSize = 20;\n",
};

describe("dependency rules (.dependency-cruiser.js)", () => {
  it("report nothing for a correctly layered tree", async () => {
    expect(await violations(layeredService)).toEqual([]);
  });

  it("no-circular: two modules that import each other", async () => {
    const found = await violations({
      "packages/kit/src/a.ts": 'import { b } from "./b.js";\nexport const a = () => b;\n',
      "packages/kit/src/b.ts": 'import { a } from "./a.js";\nexport const b = () => a;\n',
    });
    expect(found.map((f) => f.rule)).toEqual(["no-circular"]);
    expect([found[0]!.from, found[0]!.to].sort()).toEqual(["packages/kit/src/a.ts", "packages/kit/src/b.ts"]);
  });

  it("no-service-imports-another-service: services/a reaching into services/b by a relative path", async () => {
    expect(
      await violations({
        "services/a/src/grpc/pets.ts":
          'import { owner } from "../../../b/src/domain/owner.js";\nexport const o = owner;\n',
        "services/b/src/domain/owner.ts": "export const owner = 1;\n",
      }),
    ).toEqual([
      {
        rule: "no-service-imports-another-service",
        from: "services/a/src/grpc/pets.ts",
        to: "services/b/src/domain/owner.ts",
      },
    ]);
  });

  it("no-service-imports-another-service: a service importing another by its package name", async () => {
    expect(await violations({ "services/a/test/pets.test.ts": 'import "@platform/notify/src/config.js";\n' })).toEqual([
      {
        rule: "no-service-imports-another-service",
        from: "services/a/test/pets.test.ts",
        to: "@platform/notify/src/config.js",
      },
    ]);
  });

  it("no-package-imports-a-service: packages/ importing from services/", async () => {
    expect(
      await violations({
        "packages/kit/src/paging.ts":
          'import { owner } from "../../../services/b/src/domain/owner.js";\nexport const o = owner;\n',
        "services/b/src/domain/owner.ts": "export const owner = 1;\n",
      }),
    ).toEqual([
      {
        rule: "no-package-imports-a-service",
        from: "packages/kit/src/paging.ts",
        to: "services/b/src/domain/owner.ts",
      },
    ]);
  });

  it("domain-imports-no-transport-storage-or-broker: a domain file importing koa", async () => {
    expect(
      await violations({
        "services/a/src/domain/pet.ts": 'import type { Context } from "koa";\nexport type C = Context;\n',
      }),
    ).toEqual([
      { rule: "domain-imports-no-transport-storage-or-broker", from: "services/a/src/domain/pet.ts", to: "koa" },
    ]);
  });

  it("domain-imports-no-transport-storage-or-broker: the same packages as eslint's no-restricted-imports for domain/", async () => {
    const restricted = await eslintDomainPatterns();
    const forbidden = restricted.filter((p) => !p.startsWith("!")).map((p) => p.replace("*", "x"));
    const allowed = restricted.filter((p) => p.startsWith("!")).map((p) => p.slice(1));
    expect(forbidden).toEqual(expect.arrayContaining(["koa", "knex", "pg", "nats", "@grpc/x", "@platform/proto/x"]));
    expect(allowed).toEqual([
      "@platform/service-kit/errors",
      "@platform/service-kit/secret-box",
      "@platform/service-kit/random-id",
    ]);
    const found = await violations({
      "services/a/src/domain/pet.ts": [...forbidden, ...allowed].map((name) => `import "${name}";`).join("\n"),
    });
    expect(found.map((f) => f.rule)).toEqual(forbidden.map(() => "domain-imports-no-transport-storage-or-broker"));
    expect(found.map((f) => f.to).sort()).toEqual([...forbidden].sort());
  });

  it("domain-imports-no-outer-folder: a domain file importing ../db/", async () => {
    expect(
      await violations({
        "services/a/src/domain/pet.ts": 'import { listPets } from "../db/pet-store.js";\nexport const l = listPets;\n',
        "services/a/src/db/pet-store.ts": "export const listPets = 1;\n",
      }),
    ).toEqual([
      {
        rule: "domain-imports-no-outer-folder",
        from: "services/a/src/domain/pet.ts",
        to: "services/a/src/db/pet-store.ts",
      },
    ]);
  });

  it("db-imports-no-outer-folder: a db file importing ../grpc/", async () => {
    expect(
      await violations({
        "services/a/src/db/pet-store.ts":
          'import { deadline } from "../grpc/deadline.js";\nexport const d = deadline;\n',
        "services/a/src/grpc/deadline.ts": "export const deadline = 1;\n",
      }),
    ).toEqual([
      {
        rule: "db-imports-no-outer-folder",
        from: "services/a/src/db/pet-store.ts",
        to: "services/a/src/grpc/deadline.ts",
      },
    ]);
  });

  it("adapter-imports-no-entry-point: an adapter importing main.ts", async () => {
    expect(
      await violations({
        "services/a/src/main.ts": "export const started = 1;\n",
        "services/a/src/events/projector.ts": 'import { started } from "../main.js";\nexport const s = started;\n',
      }),
    ).toEqual([
      {
        rule: "adapter-imports-no-entry-point",
        from: "services/a/src/events/projector.ts",
        to: "services/a/src/main.ts",
      },
    ]);
  });

  it("adapters-import-one-way: events/ and delivery/ importing each other (no module cycle)", async () => {
    const found = await violations({
      "services/a/src/events/fanout.ts": 'import { sent } from "../delivery/metrics.js";\nexport const f = sent;\n',
      "services/a/src/events/jobs.ts": "export const job = 1;\n",
      "services/a/src/delivery/metrics.ts": "export const sent = 1;\n",
      "services/a/src/delivery/worker.ts": 'import { job } from "../events/jobs.js";\nexport const w = job;\n',
    });
    expect(new Set(found.map((f) => f.rule))).toEqual(new Set(["adapters-import-one-way"]));
    expect(new Set(found.flatMap((f) => [f.from, f.to]))).toEqual(
      new Set(["services/a/src/events", "services/a/src/delivery"]),
    );
  });

  it("console-page-imports-no-page: a console page importing another page (its test may import its own)", async () => {
    const found = await violations({
      "services/a/src/console/pages/sign-in.ts": "export const throttleKey = (email: string) => email;\n",
      "services/a/src/console/pages/sign-in.test.ts":
        'import { throttleKey } from "./sign-in.js";\nthrottleKey("a");\n',
      "services/a/src/console/pages/rotate.ts":
        'import { throttleKey } from "./sign-in.js";\nexport const r = throttleKey;\n',
      "services/a/src/console/password-check.ts": "export const check = 1;\n",
      "services/a/src/console/pages/users.ts":
        'import { check } from "../password-check.js";\nexport const u = check;\n',
    });
    expect(found).toEqual([
      {
        rule: "console-page-imports-no-page",
        from: "services/a/src/console/pages/rotate.ts",
        to: "services/a/src/console/pages/sign-in.ts",
      },
    ]);
  });
});

/** The package patterns eslint.config.js forbids in services/*\/src/domain/ (a negated one allows). */
async function eslintDomainPatterns(): Promise<string[]> {
  type Block = { files?: string[]; rules?: Record<string, unknown> };
  const configFile = join(root, "eslint.config.js");
  const { default: blocks } = (await import(configFile)) as { default: Block[] };
  const domain = blocks.find((b) => b.files?.includes("services/*/src/domain/**/*.ts"));
  const rule = domain?.rules?.["no-restricted-imports"] as [string, { patterns: { group: string[] }[] }] | undefined;
  if (!rule) throw new Error("eslint.config.js has no no-restricted-imports rule for services/*/src/domain/");
  return rule[1].patterns.flatMap((p) => p.group);
}

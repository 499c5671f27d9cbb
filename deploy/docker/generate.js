// @ts-check
// Writes services/<svc>/Dockerfile for every service from Dockerfile.template beside this file, so
// the four images cannot drift apart: `npm run generate:dockerfiles`. test/dockerfiles.test.ts
// fails when a committed Dockerfile differs from what this produces, and test/images.test.ts
// builds and starts each image in an emulation of its Dockerfile.
//
// What differs between services comes from facts the repository already holds:
//   - the services: the root package.json's workspaces under services/
//   - the workspaces a service runs with: its package.json dependencies on @platform/*, transitively
//   - what its build compiles: its build project (tsconfig.build.json, else tsconfig.json) and the
//     projects that one references, transitively; each project's `include` is what is copied.
//     They must be the same workspaces as the ones it runs with: a build project that references
//     more (a test helper) or fewer (an import tsc cannot find) is refused here.
//   - what it runs besides compiled code: the entries of each workspace's package.json "files"
//     other than dist (the gateway's static/: the console's script and style sheet), copied as they
//     are into the runtime stage
//   - its version: its package.json version (the OCI version label)
//   - its ports: deploy/helm/platform/values.yaml, <service>.port and <service>.metricsPort
//   - its base: deploy/docker/base-image.json's tag pinned by its digest, the tag's Node version
//     being the one in .node-version (the version the suite runs on)
//   - its image name in the header's build command: what the chart pulls by default,
//     values.yaml image.registry + "/" + <service>.image.repository, tagged with its version
import { existsSync } from "node:fs";
import { readFile, writeFile } from "node:fs/promises";
import { basename, dirname, join, posix, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { parse } from "yaml";

const here = dirname(fileURLToPath(import.meta.url));
const defaultRoot = join(here, "..", "..");

/**
 * @param {string} file
 * @returns {Promise<any>}
 */
const readJson = async (file) => JSON.parse(await readFile(file, "utf8"));

/**
 * The workspace directories a package needs at run time: its @platform/* dependencies, transitively.
 * @param {string} root
 * @param {string} dir
 * @param {Map<string, string>} dirOfName workspace package name -> directory
 * @param {Set<string>} [seen]
 * @returns {Promise<Set<string>>}
 */
async function runtimeWorkspaces(root, dir, dirOfName, seen = new Set()) {
  const manifest = await readJson(join(root, dir, "package.json"));
  for (const name of Object.keys(manifest.dependencies ?? {})) {
    const dependency = dirOfName.get(name);
    if (dependency && !seen.has(dependency)) {
      seen.add(dependency);
      await runtimeWorkspaces(root, dependency, dirOfName, seen);
    }
  }
  return seen;
}

/**
 * A workspace's build project: tsconfig.build.json (sources without tests) when it has one.
 * @param {string} root
 * @param {string} dir
 */
const buildProjectOf = (root, dir) =>
  existsSync(join(root, dir, "tsconfig.build.json")) ? `${dir}/tsconfig.build.json` : `${dir}/tsconfig.json`;

/**
 * The TypeScript projects a build compiles: `project` and what it references, transitively,
 * each with the folders its `include` names. Repository-relative posix paths.
 * @param {string} root
 * @param {string} project e.g. services/catalog/tsconfig.build.json
 * @param {Map<string, { dir: string, file: string, include: string[] }>} [seen] by directory
 */
async function buildProjects(root, project, seen = new Map()) {
  const dir = posix.dirname(project);
  const config = await readJson(join(root, project));
  if (config.extends !== undefined && posix.join(dir, config.extends) !== "tsconfig.base.json") {
    throw new Error(`${project} extends ${config.extends}: a build project extends only tsconfig.base.json`);
  }
  /** @type {string[]} */
  const include = config.include ?? [];
  if (include.some((entry) => /[*?]/.test(entry) || entry.startsWith(".."))) {
    throw new Error(`${project}: include names folders of its own workspace, without wildcards`);
  }
  seen.set(dir, { dir, file: posix.basename(project), include });
  for (const { path } of config.references ?? []) {
    const target = posix.join(dir, path);
    const file = target.endsWith(".json") ? target : `${target}/tsconfig.json`;
    if (seen.has(posix.dirname(file))) continue;
    await buildProjects(root, file, seen);
  }
  return seen;
}

/**
 * What a workspace's package.json "files" ships besides its compiled dist/: folders or files of
 * the workspace read at run time as they are. None when it has no "files".
 * @param {string} root
 * @param {string} dir
 * @returns {Promise<string[]>}
 */
async function shippedAsIs(root, dir) {
  /** @type {string[] | undefined} */
  const files = (await readJson(join(root, dir, "package.json"))).files;
  if (files === undefined) return [];
  if (!files.includes("dist") || files.some((entry) => /[*?!]/.test(entry) || entry.startsWith(".."))) {
    throw new Error(`${dir}/package.json: "files" names dist and folders of its own, without wildcards`);
  }
  return files.filter((entry) => entry !== "dist");
}

/**
 * Fills the template: `{{name}}` inside a line is replaced by a string; a line holding only
 * `{{name}}` is replaced by a list of lines.
 * @param {string} template
 * @param {Record<string, string | string[]>} values
 */
function fill(template, values) {
  const used = new Set();
  /** @param {string} name */
  const value = (name) => {
    if (!(name in values)) throw new Error(`Dockerfile.template: no value for {{${name}}}`);
    used.add(name);
    return values[name];
  };
  const lines = template.split("\n").flatMap((line) => {
    const whole = /^\{\{(\w+)\}\}$/.exec(line);
    if (whole) return value(whole[1] ?? "");
    return [
      line.replace(/\{\{(\w+)\}\}/g, (_, name) => {
        const text = value(name);
        if (Array.isArray(text)) throw new Error(`Dockerfile.template: {{${name}}} is a list of lines`);
        return text;
      }),
    ];
  });
  const unused = Object.keys(values).filter((name) => !used.has(name));
  if (unused.length > 0) throw new Error(`Dockerfile.template does not use ${unused.join(", ")}`);
  return lines.join("\n");
}

/**
 * The base image every service builds on, pinned: its tag must carry the Node version of .node-version.
 * @param {string} root
 * @returns {Promise<{ tag: string, digest: string }>}
 */
export async function baseImage(root = defaultRoot) {
  const { tag, digest } = await readJson(join(root, "deploy", "docker", "base-image.json"));
  const node = (await readFile(join(root, ".node-version"), "utf8")).trim();
  if (typeof tag !== "string" || !tag.startsWith(`node:${node}-`)) {
    throw new Error(`deploy/docker/base-image.json: tag ${tag} is not node:${node}-… (the version in .node-version)`);
  }
  if (typeof digest !== "string" || !/^sha256:[0-9a-f]{64}$/.test(digest)) {
    throw new Error(`deploy/docker/base-image.json: digest ${digest} is not sha256:<64 hex digits>`);
  }
  return { tag, digest };
}

const shippedComment = '# What it reads at run time as it is, not compiled (package.json "files" besides dist).';

/**
 * Every service's Dockerfile as the template makes it: repository-relative path -> content.
 * @param {string} [root] the repository root
 * @returns {Promise<Map<string, string>>}
 */
export async function dockerfiles(root = defaultRoot) {
  const template = await readFile(join(here, "Dockerfile.template"), "utf8");
  /** @type {string[]} */
  const workspaces = (await readJson(join(root, "package.json"))).workspaces;
  const dirOfName = new Map();
  for (const dir of workspaces) dirOfName.set((await readJson(join(root, dir, "package.json"))).name, dir);
  const values = parse(await readFile(join(root, "deploy", "helm", "platform", "values.yaml"), "utf8"));
  const base = await baseImage(root);

  const result = new Map();
  for (const serviceDir of workspaces.filter((dir) => dir.startsWith("services/"))) {
    const service = basename(serviceDir);
    const { version } = await readJson(join(root, serviceDir, "package.json"));
    const runtime = await runtimeWorkspaces(root, serviceDir, dirOfName);
    // In the root package.json's order, so the output does not depend on how dependencies are listed.
    const imports = workspaces.filter((dir) => runtime.has(dir));
    const projects = await buildProjects(root, buildProjectOf(root, serviceDir));
    const compiled = workspaces.filter((dir) => projects.has(dir) && dir !== serviceDir);
    if (compiled.join() !== imports.join() || !projects.has(serviceDir)) {
      throw new Error(
        `${buildProjectOf(root, serviceDir)} compiles ${compiled.join(", ") || "no workspace"} besides ${service}, ` +
          `but ${service} runs with ${imports.join(", ") || "no workspace"} (its package.json dependencies): ` +
          "reference exactly the build projects of what src imports",
      );
    }
    const ports = [values[service]?.port, values[service]?.metricsPort];
    if (!ports.every(Number.isInteger)) {
      throw new Error(`deploy/helm/platform/values.yaml has no ${service}.port and ${service}.metricsPort`);
    }
    const registry = values[service]?.image?.registry || values.image?.registry;
    const repository = values[service]?.image?.repository;
    if (typeof registry !== "string" || typeof repository !== "string" || repository === "") {
      throw new Error(`deploy/helm/platform/values.yaml has no image.registry and ${service}.image.repository`);
    }
    const own = [...imports, serviceDir];
    const shipped = [];
    for (const dir of own) {
      for (const entry of await shippedAsIs(root, dir)) shipped.push(posix.join(dir, entry));
    }
    const text = fill(template, {
      service,
      version,
      baseTag: base.tag,
      baseImage: `${base.tag}@${base.digest}`,
      image: `${registry}/${repository}`,
      imports: imports.join(", "),
      manifests: own.map((dir) => `COPY ${dir}/package.json ${dir}/`),
      sources: own.flatMap((dir) => {
        const project = projects.get(dir);
        if (!project) throw new Error(`no build project for ${dir}`);
        return [
          `COPY ${dir}/${project.file} ${dir}/`,
          ...project.include.map((entry) => `COPY ${posix.join(dir, entry)} ${posix.join(dir, entry)}`),
        ];
      }),
      buildProject: `${serviceDir}/${projects.get(serviceDir)?.file}`,
      ownDirs: own.join(" "),
      dists: own.map((dir) => `${dir}/dist`).join(" "),
      compiled: own.map((dir) => `COPY --from=build /app/${dir}/dist ${dir}/dist`),
      shipped: shipped.length === 0 ? [] : [shippedComment, ...shipped.map((path) => `COPY ${path} ${path}`)],
      ports: ports.join(" "),
    });
    result.set(`${serviceDir}/Dockerfile`, text);
  }
  return result;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  for (const [path, text] of await dockerfiles()) {
    await writeFile(join(defaultRoot, path), text);
    console.log(`wrote ${relative(defaultRoot, join(defaultRoot, path))}`);
  }
}

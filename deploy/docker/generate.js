// @ts-check
// Writes services/<svc>/Dockerfile for every service from Dockerfile.template beside this file, so
// the four images cannot drift apart: `npm run generate:dockerfiles`. test/dockerfiles.test.ts
// fails when a committed Dockerfile differs from what this produces.
//
// What differs between services comes from facts the repository already holds:
//   - the services: the root package.json's workspaces under services/
//   - the workspaces a service runs with: its package.json dependencies on @platform/*, transitively
//   - its ports: deploy/helm/platform/values.yaml, <service>.port and <service>.metricsPort
import { readFile, writeFile } from "node:fs/promises";
import { basename, dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { parse } from "yaml";

const here = dirname(fileURLToPath(import.meta.url));
const defaultRoot = join(here, "..", "..");

/**
 * Workspaces a service's build stage compiles beyond the ones it runs with, and why.
 * @type {Record<string, { dir: string, why: string }[]>}
 */
const buildOnlyWorkspaces = {
  webhooks: [
    {
      dir: "packages/webhook-verifier",
      why: "The partner verifier: services/webhooks references it for its signature tests.",
    },
  ],
};

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

  const manifests = workspaces.map((dir) => `COPY ${dir}/package.json ${dir}/`);
  const result = new Map();
  for (const serviceDir of workspaces.filter((dir) => dir.startsWith("services/"))) {
    const service = basename(serviceDir);
    const runtime = await runtimeWorkspaces(root, serviceDir, dirOfName);
    // In the root package.json's order, so the output does not depend on how dependencies are listed.
    const imports = workspaces.filter((dir) => runtime.has(dir));
    const ports = [values[service]?.port, values[service]?.metricsPort];
    if (!ports.every(Number.isInteger)) {
      throw new Error(`deploy/helm/platform/values.yaml has no ${service}.port and ${service}.metricsPort`);
    }
    const text = fill(template, {
      service,
      imports: imports.join(", "),
      manifests,
      sources: [
        ...imports.map((dir) => `COPY ${dir}/ ${dir}/`),
        ...(buildOnlyWorkspaces[service] ?? []).flatMap(({ dir, why }) => [`# ${why}`, `COPY ${dir}/ ${dir}/`]),
      ],
      compiled: imports.map((dir) => `COPY --from=build /app/${dir}/dist ${dir}/dist`),
      ports: ports.join(" "),
    });
    result.set(`${serviceDir}/Dockerfile`, text);
  }
  return result;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  for (const [path, text] of await dockerfiles()) {
    await writeFile(join(defaultRoot, path), text);
    console.log(`wrote ${path}`);
  }
}

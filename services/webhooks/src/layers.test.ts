/**
 * The layers of the service (docs/architecture.md, "Inside a service (webhooks)"): each folder
 * imports only from the folders below it, and no files import each other in a circle.
 */
import { readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const src = dirname(fileURLToPath(import.meta.url));

/** Bottom up; the files at the top of src/ (main.ts, config.ts, migrate.ts) are above them all. */
const layers = ["domain", "db", "events", "delivery", "grpc"];

function rank(file: string): number {
  const folder = file.includes("/") ? file.slice(0, file.indexOf("/")) : "";
  return folder === "" ? layers.length : layers.indexOf(folder);
}

function sources(folder: string): string[] {
  return readdirSync(folder, { withFileTypes: true }).flatMap((entry) => {
    const path = join(folder, entry.name);
    if (entry.isDirectory()) return sources(path);
    return entry.name.endsWith(".ts") && !entry.name.endsWith(".test.ts") ? [path] : [];
  });
}

/** Each source file (relative to src/) with the source files it imports. */
function importGraph(): Map<string, string[]> {
  const graph = new Map<string, string[]>();
  for (const path of sources(src)) {
    const text = readFileSync(path, "utf8");
    const targets = [...text.matchAll(/\bfrom\s+"(\.{1,2}\/[^"]+)\.js"/g)]
      .map((match) => relative(src, resolve(dirname(path), `${match[1]}.ts`)))
      .filter((target) => !target.startsWith(".."));
    graph.set(relative(src, path), targets);
  }
  return graph;
}

describe("the layers of the webhooks service", () => {
  const graph = importGraph();

  it("knows every folder", () => {
    const unknown = [...graph.keys()].filter((file) => rank(file) < 0);
    expect(unknown).toEqual([]);
    expect(graph.size).toBeGreaterThan(40);
  });

  it("has no import from a lower folder to a higher one", () => {
    const upward = [...graph].flatMap(([file, targets]) =>
      targets.filter((target) => rank(target) > rank(file)).map((target) => `${file} -> ${target}`),
    );
    expect(upward).toEqual([]);
  });

  it("has no circle of files", () => {
    const circles: string[] = [];
    const done = new Set<string>();
    const visit = (file: string, path: string[]) => {
      if (path.includes(file)) {
        circles.push([...path.slice(path.indexOf(file)), file].join(" -> "));
        return;
      }
      if (done.has(file)) return;
      for (const target of graph.get(file) ?? []) visit(target, [...path, file]);
      done.add(file);
    };
    for (const file of graph.keys()) visit(file, []);
    expect(circles).toEqual([]);
  });
});

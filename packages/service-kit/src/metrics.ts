import { existsSync, readFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { collectDefaultMetrics, Gauge, Registry } from "prom-client";

/** What a running process is: its service's released version and the commit its image was built from. */
export interface BuildInfo {
  /** The service's package.json version (releases.json records which commit each version is). */
  version: string;
  /** BUILD_REVISION, which the image sets to the commit it was built from; "unknown" outside an image. */
  revision: string;
}

/**
 * The build of the service whose entry point is `entryUrl` (main.ts passes its import.meta.url):
 * the version of the nearest package.json above it (services/<svc>/package.json, from dist/src/ in
 * the tree and in the image alike) and BUILD_REVISION from the environment.
 */
export function readBuildInfo(entryUrl: string, env: Record<string, string | undefined> = process.env): BuildInfo {
  const start = dirname(fileURLToPath(entryUrl));
  for (let dir = start; ; dir = dirname(dir)) {
    const manifest = join(dir, "package.json");
    if (existsSync(manifest)) {
      const { version } = JSON.parse(readFileSync(manifest, "utf8")) as { version?: unknown };
      if (typeof version !== "string" || version === "") throw new Error(`${manifest} has no version`);
      const revision = env.BUILD_REVISION?.trim();
      return { version, revision: revision ? revision : "unknown" };
    }
    if (dirname(dir) === dir) throw new Error(`no package.json above ${start}`);
  }
}

/**
 * A registry per process, with the default Node.js process metrics and a `service` label; with
 * `build`, also `platform_build_info{service,version,revision} 1`, so a dashboard or an alert can
 * tell which release of each service runs (and spot two at once during a rollout).
 */
export function createMetricsRegistry(service: string, build?: BuildInfo): Registry {
  const registry = new Registry();
  registry.setDefaultLabels({ service });
  collectDefaultMetrics({ register: registry });
  if (build) {
    new Gauge({
      name: "platform_build_info",
      help: "The running build: version (the service's package.json) and revision (BUILD_REVISION); always 1.",
      labelNames: ["version", "revision"],
      registers: [registry],
    }).set({ version: build.version, revision: build.revision }, 1);
  }
  return registry;
}

export interface MetricsServer {
  port: number;
  close(): Promise<void>;
}

/** Serves `GET /metrics` (Prometheus text format) on its own port, away from partner traffic. */
export async function startMetricsServer(registry: Registry, host: string, port: number): Promise<MetricsServer> {
  const server: Server = createServer((req, res) => {
    if (req.method === "GET" && req.url?.split("?")[0] === "/metrics") {
      registry.metrics().then(
        (body) => {
          res.writeHead(200, { "content-type": registry.contentType });
          res.end(body);
        },
        () => {
          res.writeHead(500).end();
        },
      );
      return;
    }
    res.writeHead(404, { "content-type": "text/plain" }).end("not found\n");
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, host, () => resolve());
  });
  return {
    port: (server.address() as AddressInfo).port,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

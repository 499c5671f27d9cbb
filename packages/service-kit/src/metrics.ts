import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { collectDefaultMetrics, Registry } from "prom-client";

/** A registry per process, with the default Node.js process metrics and a `service` label. */
export function createMetricsRegistry(service: string): Registry {
  const registry = new Registry();
  registry.setDefaultLabels({ service });
  collectDefaultMetrics({ register: registry });
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

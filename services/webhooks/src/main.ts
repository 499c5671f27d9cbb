/**
 * The webhooks service. For now a shell: it serves grpc.health.v1.Health and /metrics so it can be
 * deployed, probed and scraped like the others; its own gRPC service comes with its issue.
 */
import { announceConfiguration, announceListening, createLogger } from "@platform/service-kit/logger";
import { createMetricsRegistry, startMetricsServer } from "@platform/service-kit/metrics";
import { createGrpcInstrumentation, startGrpcServer } from "@platform/service-kit/grpc-server";
import { exitGracefullyOnSignal, failStartup } from "@platform/service-kit/shutdown";
import { loadWebhooksConfig } from "./config.js";

const bootLogger = createLogger("webhooks", "info");

async function main() {
  const config = loadWebhooksConfig(process.env);
  const logger = createLogger("webhooks", config.LOG_LEVEL);
  announceConfiguration(logger, config);
  const registry = createMetricsRegistry("webhooks");
  const grpc = await startGrpcServer({
    host: config.GRPC_HOST,
    port: config.GRPC_PORT,
    instrumentation: createGrpcInstrumentation(logger, registry),
    services: [],
  });
  const metrics = await startMetricsServer(registry, config.METRICS_HOST, config.METRICS_PORT);
  announceListening(logger, { grpcPort: grpc.port, metricsPort: metrics.port });
  exitGracefullyOnSignal(logger, config.SHUTDOWN_GRACE + 5_000, async () => {
    await grpc.shutdown(config.SHUTDOWN_GRACE);
    await metrics.close();
  });
}

main().catch((error: unknown) => failStartup(bootLogger, error));

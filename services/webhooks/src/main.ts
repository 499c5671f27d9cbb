/**
 * The webhooks service. TEMPORARY wiring (helper A): serves webhooks.v1.WebhookService so the
 * gateway's end-to-end tests can run; the pipeline's main.ts (helper B) replaces this file and
 * registers the service the same way, with the JetStream DeliveryQueue.
 */
import { WebhookServiceService } from "@platform/proto/webhooks/v1";
import { createGrpcInstrumentation, instrumentService, startGrpcServer } from "@platform/service-kit/grpc-server";
import { defaultIdempotencyOptions, purgeExpiredIdempotencyKeysEvery } from "@platform/service-kit/idempotency";
import { announceConfiguration, announceListening, createLogger } from "@platform/service-kit/logger";
import { createMetricsRegistry, startMetricsServer } from "@platform/service-kit/metrics";
import { openServiceDatabase } from "@platform/service-kit/postgres";
import { exitGracefullyOnSignal, failStartup } from "@platform/service-kit/shutdown";
import { migrations } from "../migrations/index.js";
import { loadWebhooksConfig, WEBHOOKS_SCHEMA } from "./config.js";
import { createTargetResolver } from "./delivery/target-resolver.js";
import type { DeliveryQueue } from "./events/delivery-jobs.js";
import { createWebhookService } from "./grpc/webhook-service.js";

const bootLogger = createLogger("webhooks", "info");

async function main() {
  const config = loadWebhooksConfig(process.env);
  const logger = createLogger("webhooks", config.LOG_LEVEL);
  announceConfiguration(logger, config);
  const db = await openServiceDatabase({
    url: config.DATABASE_URL,
    schema: WEBHOOKS_SCHEMA,
    poolMax: config.DATABASE_POOL_MAX,
    migrateOnStart: config.MIGRATE_ON_START,
    migrations,
    logger,
  });
  // TEMPORARY: no JetStream queue yet; due deliveries are only logged (the sweeper will find them).
  const queue: DeliveryQueue = {
    enqueue(jobs) {
      logger.info({ jobs: jobs.length }, "delivery jobs (temporary queue: not enqueued)");
      return Promise.resolve();
    },
  };
  const registry = createMetricsRegistry("webhooks");
  const instrumentation = createGrpcInstrumentation(logger, registry);
  const grpc = await startGrpcServer({
    host: config.GRPC_HOST,
    port: config.GRPC_PORT,
    instrumentation,
    services: [
      {
        definition: WebhookServiceService,
        implementation: instrumentService(
          WebhookServiceService,
          createWebhookService({
            db,
            keyRing: config.SECRETS_KEY,
            queue,
            targets: createTargetResolver({ allowPrivate: config.WEBHOOKS_ALLOW_PRIVATE_TARGETS }),
            idempotency: { ...defaultIdempotencyOptions, ttlMs: config.IDEMPOTENCY_TTL },
            retentionMs: config.WEBHOOKS_RETENTION,
          }),
          instrumentation,
        ),
      },
    ],
  });
  const metrics = await startMetricsServer(registry, config.METRICS_HOST, config.METRICS_PORT);
  const purge = purgeExpiredIdempotencyKeysEvery(db, config.IDEMPOTENCY_PURGE_INTERVAL, logger);
  announceListening(logger, { grpcPort: grpc.port, metricsPort: metrics.port });
  exitGracefullyOnSignal(logger, config.SHUTDOWN_GRACE + 5_000, async () => {
    purge.stop();
    await grpc.shutdown(config.SHUTDOWN_GRACE);
    await metrics.close();
    await db.destroy();
  });
}

main().catch((error: unknown) => failStartup(bootLogger, error));

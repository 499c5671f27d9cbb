import { CatalogServiceService } from "@platform/proto/catalog/v1";
import { defaultIdempotencyOptions, purgeExpiredIdempotencyKeysEvery } from "@platform/service-kit/idempotency";
import { announceConfiguration, announceListening, createLogger } from "@platform/service-kit/logger";
import { createMetricsRegistry, readBuildInfo, startMetricsServer } from "@platform/service-kit/metrics";
import { knexPoolProbe, registerDatabasePoolMetrics } from "@platform/service-kit/pool-metrics";
import { openServiceDatabase } from "@platform/service-kit/postgres";
import { createGrpcInstrumentation, instrumentService, startGrpcServer } from "@platform/service-kit/grpc-server";
import { exitGracefullyOnSignal, failStartup } from "@platform/service-kit/shutdown";
import { startTracing } from "@platform/service-kit/tracing";
import { migrations } from "../migrations/index.js";
import { CATALOG_SCHEMA, loadCatalogConfig } from "./config.js";
import { createPetRepository } from "./db/pet-repository.js";
import { createCatalogService } from "./grpc/catalog-service.js";

const bootLogger = createLogger("catalog", "info");
const build = readBuildInfo(import.meta.url);

async function main() {
  const config = loadCatalogConfig(process.env);
  const logger = createLogger("catalog", config.LOG_LEVEL);
  announceConfiguration(logger, config, build);
  const db = await openServiceDatabase({
    url: config.DATABASE_URL,
    schema: CATALOG_SCHEMA,
    poolMax: config.DATABASE_POOL_MAX,
    migrateOnStart: config.MIGRATE_ON_START,
    migrations,
    logger,
  });

  const registry = createMetricsRegistry("catalog", build);
  registerDatabasePoolMetrics(registry, { main: knexPoolProbe(db) });
  const tracing = await startTracing("catalog", config);
  const instrumentation = createGrpcInstrumentation(logger, registry, tracing);
  const grpc = await startGrpcServer({
    host: config.GRPC_HOST,
    port: config.GRPC_PORT,
    maxConnectionAgeMs: config.GRPC_MAX_CONNECTION_AGE,
    maxConnectionAgeGraceMs: config.GRPC_MAX_CONNECTION_AGE_GRACE,
    instrumentation,
    services: [
      {
        definition: CatalogServiceService,
        implementation: instrumentService(
          CatalogServiceService,
          createCatalogService({
            db,
            pets: createPetRepository(db),
            idempotency: {
              ...defaultIdempotencyOptions,
              ttlMs: config.IDEMPOTENCY_TTL,
              leaseMs: config.IDEMPOTENCY_LEASE,
            },
          }),
          instrumentation,
        ),
      },
    ],
  });
  const metrics = await startMetricsServer(registry, config.METRICS_HOST, config.METRICS_PORT);

  const purge = purgeExpiredIdempotencyKeysEvery(db, config.IDEMPOTENCY_PURGE_INTERVAL, logger);

  announceListening(logger, { grpcPort: grpc.port, metricsPort: metrics.port }, build);
  exitGracefullyOnSignal(logger, config, {
    notReady: () => grpc.notServing(),
    async stop(graceMs) {
      purge.stop();
      await grpc.shutdown(graceMs);
      await metrics.close();
      await db.destroy();
      await tracing.shutdown();
    },
  });
}

main().catch((error: unknown) => failStartup(bootLogger, error));

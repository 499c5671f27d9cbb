/**
 * The webhooks service: wiring only. Postgres (schema "webhooks"), NATS JetStream (streams and
 * durable consumers declared at start), the outbox relay, the gRPC services, the fan-out of
 * platform events into deliveries, the delivery worker, the sweeper, the janitor, the recovery
 * runner and /metrics.
 */
import { EventServiceService, WebhookServiceService } from "@platform/proto/webhooks/v1";
import { createGrpcInstrumentation, instrumentService, startGrpcServer } from "@platform/service-kit/grpc-server";
import { defaultIdempotencyOptions, purgeExpiredIdempotencyKeysEvery } from "@platform/service-kit/idempotency";
import { announceConfiguration, announceListening, createLogger } from "@platform/service-kit/logger";
import { createMetricsRegistry, readBuildInfo, startMetricsServer } from "@platform/service-kit/metrics";
import { connectNats } from "@platform/service-kit/nats";
import { startOutboxRelay } from "@platform/service-kit/outbox";
import { knexPoolProbe, registerDatabasePoolMetrics } from "@platform/service-kit/pool-metrics";
import { startConsumerLagMetrics } from "@platform/service-kit/consumer-metrics";
import { openServiceDatabase } from "@platform/service-kit/postgres";
import { exitGracefullyOnSignal, failStartup } from "@platform/service-kit/shutdown";
import { startTracing } from "@platform/service-kit/tracing";
import { migrations } from "../migrations/index.js";
import { loadWebhooksConfig, WEBHOOKS_SCHEMA, WEBHOOKS_SEARCH_PATH } from "./config.js";
import { createBatchedAttemptStore } from "./db/batched-attempt-store.js";
import { markHistorySwitched } from "./db/history-backfill.js";
import { ensureDayPartitions } from "./db/retention.js";
import { resealEndpointSecrets } from "./db/secret-reseal.js";
import { startBacklogCollector } from "./delivery/backlog-collector.js";
import { startDeliveryWorker } from "./delivery/delivery-worker.js";
import { createHttpsSender } from "./delivery/https-sender.js";
import { startJanitor } from "./delivery/janitor.js";
import { startRecoveryRunner } from "./delivery/recovery-runner.js";
import { createPipelineMetrics, type RefusalPath } from "./delivery/pipeline-metrics.js";
import { startSweeper } from "./delivery/sweeper.js";
import { createTargetResolver } from "./delivery/target-resolver.js";
import { createJetStreamDeliveryQueue } from "./events/delivery-queue.js";
import { startFanout } from "./events/fanout.js";
import { declareStreams, DELIVERY_CONSUMER, FANOUT_CONSUMER, streamNames } from "./events/streams.js";
import { createEventService } from "./grpc/event-service.js";
import { createWebhookService } from "./grpc/webhook-service.js";

const bootLogger = createLogger("webhooks", "info");
const build = readBuildInfo(import.meta.url);

async function main() {
  const config = loadWebhooksConfig(process.env);
  const logger = createLogger("webhooks", config.LOG_LEVEL);
  // The allowed ports as the operator lists them ("443,8443"), not the parsed ranges.
  announceConfiguration(logger, { ...config, WEBHOOKS_ALLOWED_PORTS: config.WEBHOOKS_ALLOWED_PORTS.text }, build);
  const keyRing = config.SECRETS_KEY;
  const db = await openServiceDatabase({
    url: config.DATABASE_URL,
    schema: WEBHOOKS_SCHEMA,
    searchPath: WEBHOOKS_SEARCH_PATH,
    poolMax: config.DATABASE_POOL_MAX,
    migrateOnStart: config.MIGRATE_ON_START,
    migrations,
    logger,
  });
  // From now on the previous release's replicas no longer claim deliveries (the history's fence).
  await markHistorySwitched(db);
  // The coming days' partitions now, not only at the janitor's first run an interval later.
  await ensureDayPartitions(db).catch((error: unknown) =>
    logger.warn({ err: error }, "making the coming days' partitions failed; the janitor tries again"),
  );

  const names = streamNames(config.NATS_NAMESPACE);
  // Declared at start and after every reconnect: a server that lost its store gets the streams
  // back; the sweeper re-enqueues lost jobs.
  const nc = await connectNats({
    servers: config.NATS_URL,
    name: "webhooks",
    logger,
    declare: (jsm) =>
      declareStreams(jsm, names, { leaseMs: config.WEBHOOKS_LEASE, replicas: config.NATS_STREAM_REPLICAS }),
  });
  const js = nc.jetstream();

  const registry = createMetricsRegistry("webhooks", build);
  registerDatabasePoolMetrics(registry, { main: knexPoolProbe(db) });
  const consumerLag = startConsumerLagMetrics({
    registry,
    js,
    consumers: [
      { stream: names.events, consumer: FANOUT_CONSUMER },
      { stream: names.deliveries, consumer: DELIVERY_CONSUMER },
    ],
    logger,
  });
  const pipelineMetrics = createPipelineMetrics(registry);
  const relay = startOutboxRelay({
    db,
    js,
    logger: logger.child({ component: "outbox-relay" }),
    pollIntervalMs: config.OUTBOX_POLL_INTERVAL,
    // Rows stay until the fan-out has recorded their event (it deletes them).
    republishAfterMs: config.OUTBOX_REPUBLISH_AFTER,
    registry,
    metricPrefix: "webhooks",
  });
  // The internal facts of the tenant projections (webhook.endpoint_dead_lettered / _resumed).
  const endpointEvents = { namespace: names.namespace, kick: () => relay.kick() };
  const queue = createJetStreamDeliveryQueue({ js, db, namespace: names.namespace });
  // One resolver per path, so webhooks_target_refusals_total says where a target was refused.
  const targetsFor = (path: RefusalPath) =>
    createTargetResolver({
      allowPrivate: config.WEBHOOKS_ALLOW_PRIVATE_TARGETS,
      allowedPorts: config.WEBHOOKS_ALLOWED_PORTS,
      onRefusal: (refusal) => pipelineMetrics.targetRefusals.inc({ address_class: refusal, path }),
    });

  const tracing = await startTracing("webhooks", config);
  const instrumentation = createGrpcInstrumentation(logger, registry, tracing);
  const grpc = await startGrpcServer({
    host: config.GRPC_HOST,
    port: config.GRPC_PORT,
    maxConnectionAgeMs: config.GRPC_MAX_CONNECTION_AGE,
    maxConnectionAgeGraceMs: config.GRPC_MAX_CONNECTION_AGE_GRACE,
    instrumentation,
    services: [
      {
        definition: EventServiceService,
        implementation: instrumentService(
          EventServiceService,
          createEventService({ db, namespace: names.namespace, kickRelay: () => relay.kick() }),
          instrumentation,
        ),
      },
      {
        definition: WebhookServiceService,
        implementation: instrumentService(
          WebhookServiceService,
          createWebhookService({
            db,
            keyRing,
            queue,
            targets: targetsFor("create"),
            idempotency: {
              ...defaultIdempotencyOptions,
              ttlMs: config.IDEMPOTENCY_TTL,
              leaseMs: config.IDEMPOTENCY_LEASE,
            },
            retentionMs: config.WEBHOOKS_RETENTION,
            events: endpointEvents,
          }),
          instrumentation,
        ),
      },
    ],
  });

  const fanout = startFanout({
    db,
    js,
    names,
    queue,
    logger: logger.child({ component: "fanout" }),
    metrics: pipelineMetrics,
    tracer: tracing.tracer,
  });
  const sender = createHttpsSender({ socketsPerOrigin: config.WEBHOOKS_ENDPOINT_CONCURRENCY });
  const worker = startDeliveryWorker({
    js,
    names,
    // A fetch's jobs are claimed by one statement; attempts finishing together are recorded in
    // one transaction (acks still follow the commit).
    store: createBatchedAttemptStore(db, endpointEvents),
    keyRing,
    targets: targetsFor("attempt"),
    sender,
    metrics: pipelineMetrics,
    logger: logger.child({ component: "delivery" }),
    retryDelaysMs: config.WEBHOOKS_RETRY_DELAYS,
    timeoutMs: config.WEBHOOKS_DELIVERY_TIMEOUT,
    leaseMs: config.WEBHOOKS_LEASE,
    concurrency: config.WEBHOOKS_CONCURRENCY,
    endpointConcurrency: config.WEBHOOKS_ENDPOINT_CONCURRENCY,
    tracer: tracing.tracer,
  });
  const sweeper = startSweeper({
    db,
    queue,
    logger: logger.child({ component: "sweeper" }),
    intervalMs: config.WEBHOOKS_SWEEP_INTERVAL,
    overdueMs: config.WEBHOOKS_SWEEP_OVERDUE,
  });
  const janitor = startJanitor({
    db,
    logger: logger.child({ component: "janitor" }),
    intervalMs: config.WEBHOOKS_JANITOR_INTERVAL,
    retentionMs: config.WEBHOOKS_RETENTION,
    batchSize: config.WEBHOOKS_JANITOR_BATCH,
  });
  const recoveries = startRecoveryRunner({
    db,
    queue,
    logger: logger.child({ component: "recovery" }),
    ratePerSecond: config.WEBHOOKS_RECOVER_RATE,
    leaseMs: config.WEBHOOKS_RECOVER_LEASE,
    pollIntervalMs: config.WEBHOOKS_RECOVER_POLL_INTERVAL,
    retentionMs: config.WEBHOOKS_RETENTION,
    events: endpointEvents,
  });
  const backlog = startBacklogCollector({
    db,
    registry,
    logger: logger.child({ component: "backlog" }),
    intervalMs: config.WEBHOOKS_BACKLOG_INTERVAL,
  });
  const purge = purgeExpiredIdempotencyKeysEvery(db, config.IDEMPOTENCY_PURGE_INTERVAL, logger);
  // SECRETS_KEY rotation, step 2: secrets still sealed under a retired key move to the active one.
  void resealEndpointSecrets(db, keyRing, { logger }).catch((error: unknown) =>
    logger.warn({ err: error }, "resealing signing secrets failed; the next start tries again"),
  );
  const metrics = await startMetricsServer(registry, config.METRICS_HOST, config.METRICS_PORT);

  announceListening(logger, { grpcPort: grpc.port, metricsPort: metrics.port }, build);
  exitGracefullyOnSignal(logger, config, {
    notReady: () => grpc.notServing(),
    async stop(graceMs) {
      // No new calls and no new jobs, together: calls and attempts in flight share the one grace
      // (attempts still running at its end are given back with nak), then the relay publishes
      // what they committed.
      purge.stop();
      consumerLag.stop();
      await Promise.all([
        grpc.shutdown(graceMs),
        fanout.stop(),
        worker.stop(graceMs),
        sweeper.stop(),
        janitor.stop(),
        recoveries.stop(),
        backlog.stop(),
      ]);
      await relay.stop();
      await nc.drain();
      await metrics.close();
      sender.close();
      await db.destroy();
      await tracing.shutdown();
    },
  });
}

main().catch((error: unknown) => failStartup(bootLogger, error));

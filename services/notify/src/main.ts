import { NotificationServiceService, TenantServiceService } from "@platform/proto/notify/v1";
import { ActivationServiceService } from "@platform/proto/notify/v1/activation";
import { UsageServiceService } from "@platform/proto/notify/v1/usage";
import { ProjectionServiceService } from "@platform/proto/notify/v1/projections";
import { createGrpcInstrumentation, instrumentService, startGrpcServer } from "@platform/service-kit/grpc-server";
import { defaultIdempotencyOptions, purgeExpiredIdempotencyKeysEvery } from "@platform/service-kit/idempotency";
import { announceConfiguration, announceListening, createLogger } from "@platform/service-kit/logger";
import { declareEventsStream, eventsStreamName } from "@platform/service-kit/event-bus";
import { createMetricsRegistry, readBuildInfo, startMetricsServer } from "@platform/service-kit/metrics";
import { connectNats } from "@platform/service-kit/nats";
import { publishAfterCommit, startOutboxRelay } from "@platform/service-kit/outbox";
import { knexPoolProbe, pgPoolProbe, registerDatabasePoolMetrics } from "@platform/service-kit/pool-metrics";
import { startConsumerLagMetrics } from "@platform/service-kit/consumer-metrics";
import { openServiceDatabase } from "@platform/service-kit/postgres";
import { exitGracefullyOnSignal, failStartup } from "@platform/service-kit/shutdown";
import { startTracing } from "@platform/service-kit/tracing";
import pg from "pg";
import { migrations } from "../migrations/index.js";
import { createSandboxChannel } from "./channel/sandbox-channel.js";
import { createWhatsAppChannel } from "./channel/whatsapp-channel.js";
import { loadNotifyConfig, NOTIFY_SCHEMA, type NotifyConfig } from "./config.js";
import { createNotificationStore } from "./db/notification-store.js";
import { createTenantRepository } from "./db/tenant-repository.js";
import { createUsageStore } from "./db/usage-store.js";
import { createEventOutbox } from "./db/event-outbox.js";
import { declareProjectionsConsumer, PROJECTIONS_CONSUMER } from "./events/projections-consumer.js";
import { rebuildProjections, startProjector } from "./events/projector.js";
import { createProjectorMetrics } from "./events/projector-metrics.js";
import { createProjectionReader } from "./db/projection-store.js";
import { createProjectionService } from "./grpc/projection-service.js";
import type { ChannelProvider, ChannelRoute } from "./domain/channel-provider.js";
import { createNotificationMetrics } from "./grpc/notification-metrics.js";
import { createNotificationService } from "./grpc/notification-service.js";
import { createTenantService } from "./grpc/tenant-service.js";
import { createActivationRepository } from "./db/activation-repository.js";
import { createActivationService } from "./grpc/activation-service.js";
import { createUsageService } from "./grpc/usage-service.js";
import { paceFrom } from "./domain/pacing.js";
import {
  NotificationStatusServiceService,
  ProviderCallbackServiceService,
} from "@platform/proto/notify/v1/provider-callbacks";
import { deliveryFailureFor } from "./channel/whatsapp-errors.js";
import { createProviderCallbackStore } from "./db/provider-callback-store.js";
import { createProviderCallbackApplier } from "./callbacks/provider-callback-applier.js";
import {
  applyInboundMessages,
  applyNumberUpdate,
  type ChannelCallbackDeps,
  type CloudApiInboundMessage,
} from "./channel/channel-callbacks.js";
import { createNotificationStatusService, createProviderCallbackService } from "./grpc/provider-callback-service.js";
import { ChannelServiceService } from "@platform/proto/notify/v1/channel";
import { createChannelRepository, TENANT_CHANNELS_CHANNEL } from "./db/channel-repository.js";
import { ListenedCache } from "@platform/service-kit/listened-cache";
import { createNumberReader } from "./channel/cloud-api-number.js";
import { channelRouteOf, startChannelChecks, type ChannelDeps } from "./channel/number-check.js";
import { createChannelService } from "./grpc/channel-service.js";

const bootLogger = createLogger("notify", "info");
const build = readBuildInfo(import.meta.url);

/** NOTIFY_CHANNEL_PROVIDER picks the adapter; tenants' own numbers come with each send (channelRoute). */
function channelProvider(config: NotifyConfig): ChannelProvider {
  if (config.NOTIFY_CHANNEL_PROVIDER === "sandbox") return createSandboxChannel();
  return createWhatsAppChannel({
    baseUrl: config.WHATSAPP_API_BASE_URL,
    // The process-wide fallback for tenants without a connected channel (optional).
    phoneNumberId: config.WHATSAPP_PHONE_NUMBER_ID,
    accessToken: config.WHATSAPP_ACCESS_TOKEN,
    templates: config.WHATSAPP_TEMPLATES,
    timeoutMs: config.WHATSAPP_TIMEOUT,
  });
}

async function main() {
  const config = loadNotifyConfig(process.env);
  const logger = createLogger("notify", config.LOG_LEVEL);
  announceConfiguration(logger, config, build);
  const db = await openServiceDatabase({
    url: config.DATABASE_URL,
    schema: NOTIFY_SCHEMA,
    poolMax: config.DATABASE_POOL_MAX,
    migrateOnStart: config.MIGRATE_ON_START,
    migrations,
    logger,
  });

  // The send path's own pool: prepared statements on plain pg connections, same schema.
  const sendPool = new pg.Pool({
    connectionString: config.DATABASE_URL,
    max: config.DATABASE_POOL_MAX,
    // Connections stay open once made (pg closes idle ones after 10 s by default): a burst after a
    // quiet spell would otherwise pay for new connections and statements prepared again.
    min: config.DATABASE_POOL_MAX,
    // No pipeline mode: the send path has no transaction of several statements left (record and
    // complete are one autocommitted statement each), so it saved nothing (bench:notify, issue 33).
    options: `-c search_path=${NOTIFY_SCHEMA}`,
    application_name: "notify-send",
    connectionTimeoutMillis: 5_000,
  });
  sendPool.on("error", (error) => logger.warn({ err: error }, "an idle send-path connection failed; it is replaced"));

  // The event bus: EVENTS is declared by every service on it (again after a reconnect, in case the
  // server lost its store), with notify's projector consumer; notify's outbox relay publishes what
  // notify announces.
  const nc = await connectNats({
    servers: config.NATS_URL,
    name: "notify",
    logger,
    declare: async (jsm) => {
      const replicas = config.NATS_STREAM_REPLICAS;
      await declareEventsStream(jsm, config.NATS_NAMESPACE, { replicas });
      await declareProjectionsConsumer(jsm, config.NATS_NAMESPACE, {
        ackWaitMs: config.PROJECTIONS_ACK_WAIT,
        replicas,
      });
    },
  });
  const js = nc.jetstream();

  const registry = createMetricsRegistry("notify", build);
  registerDatabasePoolMetrics(registry, { main: knexPoolProbe(db), send: pgPoolProbe(sendPool) });
  const notificationMetrics = createNotificationMetrics(registry);
  const consumerLag = startConsumerLagMetrics({
    registry,
    js,
    consumers: [{ stream: eventsStreamName(config.NATS_NAMESPACE), consumer: PROJECTIONS_CONSUMER }],
    logger,
  });
  const relay = startOutboxRelay({
    db,
    js,
    logger: logger.child({ component: "outbox-relay" }),
    pollIntervalMs: config.OUTBOX_POLL_INTERVAL,
    gatherMs: config.OUTBOX_GATHER,
    // Rows stay until notify's projector has recorded their event (it deletes them).
    republishAfterMs: config.OUTBOX_REPUBLISH_AFTER,
    registry,
    metricPrefix: "notify",
  });
  // A send's outcome event is written already marked published and published at once after its
  // commit (no relay pass per send); the relay covers a publish that fails or never happens.
  const atOnce = publishAfterCommit({
    db,
    nc,
    relay,
    logger: logger.child({ component: "outbox-relay" }),
    gatherMs: config.OUTBOX_GATHER,
  });
  const events = createEventOutbox({
    namespace: config.NATS_NAMESPACE,
    kick: () => relay.kick(),
    publish: (entry) => atOnce.publish(entry),
  });
  const usage = createUsageStore(db);
  // Which UTC month usage counts in; tests that cross a month boundary inject their own.
  const clock = () => new Date();
  // The poll reads: projections of EVENTS, applied by the durable consumer notify-projections.
  const tracing = await startTracing("notify", config);
  const projector = startProjector({
    db,
    js,
    namespace: config.NATS_NAMESPACE,
    logger: logger.child({ component: "projector" }),
    metrics: createProjectorMetrics(registry, { js, namespace: config.NATS_NAMESPACE }),
    tracer: tracing.tracer,
    gatherMs: config.PROJECTIONS_GATHER,
  });
  const instrumentation = createGrpcInstrumentation(logger, registry, tracing);
  const provider = channelProvider(config);
  const idempotencyOptions = {
    ...defaultIdempotencyOptions,
    ttlMs: config.IDEMPOTENCY_TTL,
    leaseMs: config.IDEMPOTENCY_LEASE,
  };
  // Each tenant's own number (PUT .../channel): its token sealed with SECRETS_KEY; with the
  // whatsapp provider, its status and quality read from the Cloud API on connect and periodically.
  const channelDeps: ChannelDeps = {
    db,
    channels: createChannelRepository(db),
    activation: createActivationRepository(db),
    events,
    requiredCapabilities: config.NOTIFY_REQUIRED_CAPABILITIES,
    secrets: config.SECRETS_KEY,
    readNumber:
      config.NOTIFY_CHANNEL_PROVIDER === "whatsapp"
        ? createNumberReader({ baseUrl: config.WHATSAPP_API_BASE_URL, timeoutMs: config.WHATSAPP_TIMEOUT })
        : undefined,
    defaultTemplates: config.WHATSAPP_TEMPLATES,
    logger: logger.child({ component: "channel" }),
  };
  // Each tenant's route (its number, opened token, templates, pace) as the send path reads it:
  // cached, and evicted on the announcement of any change to it (a trigger's pg_notify), so a send
  // never reads the channel row and opens the token itself (issue 33).
  const routes = new ListenedCache<ChannelRoute | null>({
    databaseUrl: config.DATABASE_URL,
    channel: TENANT_CHANNELS_CHANNEL,
    ttlMs: 60_000,
    logger: logger.child({ component: "channel" }),
    applicationName: "notify-channel-listener",
    what: "tenant channel",
  });
  await routes.start();
  // Provider callbacks: recorded by the gateway's call, applied then and by the pass (statuses that
  // came before their send's outcome, batches a failure or a crash left unapplied).
  const callbackStore = createProviderCallbackStore(db, events, { failureCodeFor: deliveryFailureFor });
  const callbackLogger = logger.child({ component: "provider-callbacks" });
  const channelCallbackDeps: ChannelCallbackDeps = {
    db,
    channels: channelDeps.channels,
    tenants: createTenantRepository(db),
    activation: channelDeps.activation,
    events,
    requiredCapabilities: config.NOTIFY_REQUIRED_CAPABILITIES,
    logger: callbackLogger,
  };
  const callbacks = createProviderCallbackApplier({
    store: callbackStore,
    // A customer's STOP / START and the number-level updates (quality, account) are the channel's.
    handlers: {
      inboundMessages: (phoneNumberId, messages) =>
        applyInboundMessages(channelCallbackDeps, phoneNumberId, messages as CloudApiInboundMessage[]),
      numberUpdate: (change) => applyNumberUpdate(channelCallbackDeps, change),
    },
    logger: callbackLogger,
    retryDelayMs: config.PROVIDER_CALLBACK_RETRY_DELAY,
  });
  const callbackPass = callbacks.start(config.PROVIDER_CALLBACK_PASS_INTERVAL);
  const grpc = await startGrpcServer({
    host: config.GRPC_HOST,
    port: config.GRPC_PORT,
    maxConnectionAgeMs: config.GRPC_MAX_CONNECTION_AGE,
    maxConnectionAgeGraceMs: config.GRPC_MAX_CONNECTION_AGE_GRACE,
    instrumentation,
    services: [
      {
        definition: TenantServiceService,
        implementation: instrumentService(
          TenantServiceService,
          createTenantService({
            db,
            tenants: createTenantRepository(db),
            events,
            usage,
            clock,
            testingAllowance: config.NOTIFY_TESTING_ALLOWANCE,
            idempotency: {
              ...defaultIdempotencyOptions,
              ttlMs: config.IDEMPOTENCY_TTL,
              leaseMs: config.IDEMPOTENCY_LEASE,
            },
          }),
          instrumentation,
        ),
      },
      {
        definition: ActivationServiceService,
        implementation: instrumentService(
          ActivationServiceService,
          createActivationService({
            db,
            activation: createActivationRepository(db),
            events,
            idempotency: {
              ...defaultIdempotencyOptions,
              ttlMs: config.IDEMPOTENCY_TTL,
              leaseMs: config.IDEMPOTENCY_LEASE,
            },
            requiredCapabilities: config.NOTIFY_REQUIRED_CAPABILITIES,
          }),
          instrumentation,
        ),
      },
      {
        definition: ChannelServiceService,
        implementation: instrumentService(
          ChannelServiceService,
          createChannelService({ ...channelDeps, idempotency: idempotencyOptions }),
          instrumentation,
        ),
      },
      {
        definition: UsageServiceService,
        implementation: instrumentService(
          UsageServiceService,
          createUsageService({ db, usage, events, clock }),
          instrumentation,
        ),
      },
      {
        definition: NotificationServiceService,
        implementation: instrumentService(
          NotificationServiceService,
          createNotificationService({
            store: createNotificationStore(db, sendPool, events, {
              maxBatch: config.NOTIFY_SEND_BATCH,
              maxInFlight: config.NOTIFY_SEND_BATCHES_IN_FLIGHT,
              onBatch: (statement, size) => notificationMetrics.sendBatchSize.observe({ statement }, size),
            }),
            provider,
            metrics: notificationMetrics,
            leaseMs: config.NOTIFICATION_LEASE,
            ttlMs: config.IDEMPOTENCY_TTL,
            testingAllowance: config.NOTIFY_TESTING_ALLOWANCE,
            tracer: tracing.tracer,
            pace: paceFrom({
              provider: config.NOTIFY_CHANNEL_PROVIDER,
              phoneNumberId: config.WHATSAPP_PHONE_NUMBER_ID,
              perSecond: config.NOTIFY_CHANNEL_MESSAGES_PER_SECOND,
              burst: config.NOTIFY_CHANNEL_BURST,
              enabled: config.NOTIFY_CHANNEL_PACING === "on",
            }),
            // Cached per tenant, evicted the moment a change commits (TENANT_CHANNELS_CHANNEL).
            channelRoute: async (tenantId) =>
              (await routes.get(tenantId, async () => (await channelRouteOf(channelDeps, tenantId)) ?? null)) ??
              undefined,
            channelReason: (tenantId) => channelDeps.channels.failingReason(tenantId),
          }),
          instrumentation,
        ),
      },
      {
        definition: ProviderCallbackServiceService,
        implementation: instrumentService(
          ProviderCallbackServiceService,
          createProviderCallbackService({ store: callbackStore, applier: callbacks }),
          instrumentation,
        ),
      },
      {
        definition: NotificationStatusServiceService,
        implementation: instrumentService(
          NotificationStatusServiceService,
          createNotificationStatusService({ store: callbackStore }),
          instrumentation,
        ),
      },
      {
        definition: ProjectionServiceService,
        implementation: instrumentService(
          ProjectionServiceService,
          createProjectionService({
            db,
            reader: createProjectionReader(db),
            rebuild: async (trx) =>
              rebuildProjections(trx, {
                js,
                jsm: await nc.jetstreamManager(),
                namespace: config.NATS_NAMESPACE,
                logger: logger.child({ component: "projection-rebuild" }),
              }),
          }),
          instrumentation,
        ),
      },
    ],
  });
  const metrics = await startMetricsServer(registry, config.METRICS_HOST, config.METRICS_PORT);

  const purge = purgeExpiredIdempotencyKeysEvery(db, config.IDEMPOTENCY_PURGE_INTERVAL, logger);
  const channelChecks = startChannelChecks(channelDeps, {
    intervalMs: config.NOTIFY_CHANNEL_CHECK_INTERVAL,
    leaseMs: Math.max(60_000, 4 * config.WHATSAPP_TIMEOUT),
  });

  announceListening(logger, { grpcPort: grpc.port, metricsPort: metrics.port, channelProvider: provider.name }, build);
  exitGracefullyOnSignal(logger, config, {
    notReady: () => grpc.notServing(),
    async stop(graceMs) {
      purge.stop();
      consumerLag.stop();
      await channelChecks.stop();
      // Calls in flight (a send waiting on the provider included) and the projector's current
      // event finish together, within the one grace; then the relay publishes what they committed.
      await Promise.all([grpc.shutdown(graceMs), projector.stop(), callbackPass.stop()]);
      await relay.stop();
      atOnce.flush();
      await nc.drain().catch(() => undefined);
      await metrics.close();
      await sendPool.end();
      await routes.close();
      await db.destroy();
      await tracing.shutdown();
    },
  });
}

main().catch((error: unknown) => failStartup(bootLogger, error));

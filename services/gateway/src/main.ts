import { createServer, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { failFastWhileUnreachable } from "@platform/service-kit/fail-fast-client";
import { createChannel } from "@platform/service-kit/grpc-client";
import { HealthChecker } from "@platform/service-kit/grpc-health";
import { announceConfiguration, announceListening, createLogger } from "@platform/service-kit/logger";
import { Gauge } from "prom-client";
import { createMetricsRegistry, readBuildInfo, startMetricsServer } from "@platform/service-kit/metrics";
import { knexPoolProbe, registerDatabasePoolMetrics } from "@platform/service-kit/pool-metrics";
import { openServiceDatabase } from "@platform/service-kit/postgres";
import { exitGracefullyOnSignal, failStartup } from "@platform/service-kit/shutdown";
import { startTracing } from "@platform/service-kit/tracing";
import { migrations } from "../migrations/index.js";
import { GATEWAY_SCHEMA, loadGatewayConfig, type GatewayConfig } from "./config.js";
import type { ConsoleSettings } from "./console/route.js";
import { CachedApiKeyStore, createApiKeyStore } from "./db/api-key-store.js";
import { createConsoleLinks } from "./db/console-links.js";
import { createConsoleStore } from "./db/console-store.js";
import { purgeExpiredIdempotencyKeysEvery } from "@platform/service-kit/idempotency";
import { purgeEvery } from "@platform/service-kit/purge";
import { databaseCheck } from "./db/database-check.js";
import { createFleetStore, FleetHeartbeat, newFleetMemberId } from "./db/fleet-store.js";
import { createCatalogClient } from "./grpc/catalog-client.js";
import { healthCheckOf, watchDownstreams } from "./grpc/downstreams.js";
import { createNotifyClient } from "./grpc/notify-client.js";
import { createProjectionClient } from "./grpc/projection-client.js";
import { createWebhooksClient } from "./grpc/webhooks-client.js";
import { TokenBuckets } from "./domain/token-buckets.js";
import { createGatewayApp, type Readiness } from "./app.js";

const bootLogger = createLogger("gateway", "info");

function consoleSettingsOf(config: GatewayConfig): ConsoleSettings {
  return {
    baseUrl: config.CONSOLE_BASE_URL,
    idleMs: config.CONSOLE_SESSION_IDLE,
    absoluteMs: config.CONSOLE_SESSION_ABSOLUTE,
    invitationTtlMs: config.CONSOLE_INVITATION_TTL,
    linkTtlMs: config.CONSOLE_LINK_TTL,
    login: {
      windowMs: config.CONSOLE_LOGIN_WINDOW,
      accountLimit: config.CONSOLE_LOGIN_ACCOUNT_LIMIT,
      addressLimit: config.CONSOLE_LOGIN_ADDRESS_LIMIT,
    },
    frameAncestors: config.CONSOLE_FRAME_ANCESTORS,
  };
}
const build = readBuildInfo(import.meta.url);

async function main() {
  const config = loadGatewayConfig(process.env);
  const logger = createLogger("gateway", config.LOG_LEVEL);
  announceConfiguration(logger, config, build);
  const db = await openServiceDatabase({
    url: config.DATABASE_URL,
    schema: GATEWAY_SCHEMA,
    poolMax: config.DATABASE_POOL_MAX,
    migrateOnStart: config.MIGRATE_ON_START,
    migrations,
    logger,
  });

  const apiKeys = new CachedApiKeyStore(createApiKeyStore(db), {
    databaseUrl: config.DATABASE_URL,
    ttlMs: config.API_KEY_CACHE_TTL,
    logger,
  });
  await apiKeys.start();
  const registry = createMetricsRegistry("gateway", build);
  // Each downstream's state is checked in the background: /readyz reads it without waiting, and
  // while a service is unreachable its calls are refused at once (503, nothing sent).
  // One channel per downstream, for its calls and its checks alike: a check then fails at once only
  // while the calls would too (a channel of its own could still be in its reconnect backoff after
  // the calls' had reconnected, and the view would refuse calls that would have been answered).
  const channels = {
    catalog: createChannel(config.CATALOG_ADDR),
    notify: createChannel(config.NOTIFY_ADDR),
    webhooks: createChannel(config.WEBHOOKS_ADDR),
  };
  const downstreams = watchDownstreams(
    {
      database: databaseCheck(db),
      catalog: healthCheckOf(new HealthChecker(channels.catalog), "catalog.v1.CatalogService"),
      notify: healthCheckOf(new HealthChecker(channels.notify), "notify.v1.TenantService"),
      webhooks: healthCheckOf(new HealthChecker(channels.webhooks), "webhooks.v1.WebhookService"),
    },
    { intervalMs: config.DOWNSTREAM_CHECK_INTERVAL, logger, registry },
  );
  await downstreams.start(config.DOWNSTREAM_CHECK_INTERVAL);
  const { views } = downstreams;
  const catalog = failFastWhileUnreachable(
    createCatalogClient(channels.catalog, config.UPSTREAM_TIMEOUT),
    views.catalog,
  );
  const notify = failFastWhileUnreachable(createNotifyClient(channels.notify, config.UPSTREAM_TIMEOUT), views.notify);
  const projections = failFastWhileUnreachable(
    createProjectionClient(channels.notify, config.UPSTREAM_TIMEOUT),
    views.notify,
  );
  const webhooks = failFastWhileUnreachable(
    createWebhooksClient(channels.webhooks, config.UPSTREAM_TIMEOUT),
    views.webhooks,
  );
  const rateLimits = new TokenBuckets({ ratePerSecond: config.RATE_LIMIT_PER_SECOND, burst: config.RATE_LIMIT_BURST });
  // The gateways count themselves (gateway.fleet_members) and each enforces 1/N of the limit.
  // This gateway joins before it listens, so it never serves with a count that leaves it out.
  const fleet = new FleetHeartbeat(createFleetStore(db), {
    id: newFleetMemberId(),
    intervalMs: config.FLEET_HEARTBEAT_INTERVAL,
    windowMs: config.FLEET_HEARTBEAT_WINDOW,
    logger,
    onSize: (size) => rateLimits.setFleetSize(size),
  });
  await fleet.start();
  const evictIdleBuckets = setInterval(() => rateLimits.evictIdle(), 60_000);
  evictIdleBuckets.unref();
  let stopping = false;

  // Answered from the views, never waiting on a check. Ready means this gateway can serve its own
  // part: its database (keys, grants, fleet). A downstream that is down is reported in the checks,
  // and only the routes that need it answer 503 service.unavailable with Retry-After (refused at
  // once while its view says unreachable); taking every gateway out of rotation for it would stop
  // the rest too.
  const readiness = (): Readiness => {
    const database = views.database.reachable ? "ok" : "unreachable";
    const checks = {
      database,
      catalog: views.catalog.status,
      notify: views.notify.status,
      webhooks: views.webhooks.status,
      gateway: stopping ? "stopping" : "ok",
    };
    return { ready: !stopping && database === "ok", checks };
  };

  new Gauge({
    name: "gateway_fleet_size",
    help: "Live gateways this one counts (heartbeat within FLEET_HEARTBEAT_WINDOW); it enforces 1/N of the rate limit.",
    registers: [registry],
    collect() {
      this.set(rateLimits.fleetSize);
    },
  });
  registerDatabasePoolMetrics(registry, { main: knexPoolProbe(db) });
  const tracing = await startTracing("gateway", config);
  const consoleStore = createConsoleStore(db);
  // Console links are the one mutation the gateway owns: it purges its own expired Idempotency-Keys.
  const purgeIdempotencyKeys = purgeExpiredIdempotencyKeysEvery(db, config.IDEMPOTENCY_PURGE_INTERVAL, logger);
  // Ended sessions, used links and old throttle windows are kept a week, then deleted.
  const purgeConsole = purgeEvery(
    config.IDEMPOTENCY_PURGE_INTERVAL,
    logger,
    "ended console sessions, used links and old throttle windows",
    () =>
      consoleStore.purgeExpired({
        absoluteMs: config.CONSOLE_SESSION_ABSOLUTE,
        windowMs: config.CONSOLE_LOGIN_WINDOW,
        keepMs: 7 * 86_400_000,
      }),
  );
  const app = createGatewayApp({
    catalog,
    notify,
    webhooks,
    projections,
    rateLimits,
    problemBaseUri: config.PROBLEM_BASE_URI,
    apiKeys,
    logger,
    registry,
    readiness,
    publicBaseUrl: config.PUBLIC_BASE_URL ?? "",
    tracing,
    trustProxy: config.TRUST_PROXY,
    providerCallbacks: {
      appSecret: config.WHATSAPP_APP_SECRET,
      verifyToken: config.WHATSAPP_VERIFY_TOKEN,
      maxBytes: config.WHATSAPP_CALLBACK_MAX_BYTES,
    },
    console: {
      store: consoleStore,
      settings: consoleSettingsOf(config),
      links: createConsoleLinks(db, consoleStore, {
        ttlMs: config.CONSOLE_LINK_TTL,
        idempotency: { ttlMs: config.IDEMPOTENCY_TTL, leaseMs: config.IDEMPOTENCY_LEASE },
      }),
    },
  });
  const server = createServer(app.callback());
  server.on("request", (_req, res: ServerResponse) => {
    if (stopping) res.shouldKeepAlive = false; // draining: this connection ends with this response
  });
  server.keepAliveTimeout = 65_000; // longer than a typical load balancer's idle timeout
  server.headersTimeout = 66_000;
  server.requestTimeout = 30_000;
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(config.PORT, config.HOST, () => resolve());
  });
  const metrics = await startMetricsServer(registry, config.METRICS_HOST, config.METRICS_PORT);
  const port = (server.address() as AddressInfo).port;
  announceListening(logger, { port, metricsPort: metrics.port, url: `http://127.0.0.1:${port}` }, build);

  exitGracefullyOnSignal(logger, config, {
    notReady() {
      stopping = true; // /readyz answers 503 so the load balancer stops sending new requests
    },
    async stop(graceMs) {
      // Stop accepting connections; answer what is in flight; close each keep-alive connection as
      // soon as it goes idle (responses sent meanwhile carry Connection: close, see below).
      // Requests still running when the grace is over are cut.
      await new Promise<void>((resolve) => {
        const sweep = setInterval(() => server.closeIdleConnections(), 50);
        const cut = setTimeout(() => {
          logger.warn({ graceMs }, "requests still in flight at the end of the grace; closing their connections");
          server.closeAllConnections();
        }, graceMs);
        server.close(() => {
          clearInterval(sweep);
          clearTimeout(cut);
          resolve();
        });
        server.closeIdleConnections();
      });
      // Only now that it answers nothing more does it leave: until then the others keep counting it,
      // so the fleet never admits more than the limit because of a stopping gateway.
      await fleet.stop();
      await metrics.close();
      clearInterval(evictIdleBuckets);
      purgeIdempotencyKeys.stop();
      purgeConsole.stop();
      downstreams.stop();
      for (const channel of Object.values(channels)) channel.close();
      await apiKeys.close();
      await db.destroy();
      await tracing.shutdown();
    },
  });
}

main().catch((error: unknown) => failStartup(bootLogger, error));

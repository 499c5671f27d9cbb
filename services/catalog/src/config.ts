import { z } from "zod";
import { env, loadConfig, type Environment } from "@platform/service-kit/config";

const schema = z.object({
  DATABASE_URL: env.postgresUrl("postgres://postgres@127.0.0.1:5432/platform"),
  DATABASE_POOL_MAX: env.positiveInt(10),
  GRPC_HOST: env.host("127.0.0.1"),
  GRPC_PORT: env.port(50051),
  METRICS_HOST: env.host("127.0.0.1"),
  METRICS_PORT: env.port(9465),
  LOG_LEVEL: env.logLevel(),
  SHUTDOWN_GRACE: env.duration(25_000),
  /** Run migrations at start-up (local runs); Kubernetes runs the `migrate` Job instead. */
  MIGRATE_ON_START: z
    .enum(["true", "false"])
    .default("true")
    .transform((v) => v === "true"),
  /** How long an Idempotency-Key of a pet creation is remembered. */
  IDEMPOTENCY_TTL: env.duration(24 * 3_600_000),
  /** How often expired idempotency keys are purged. */
  IDEMPOTENCY_PURGE_INTERVAL: env.duration(10 * 60_000),
});

export type CatalogConfig = z.infer<typeof schema>;
export const CATALOG_SCHEMA = "catalog";

export function loadCatalogConfig(environment: Environment): CatalogConfig {
  return loadConfig(schema, environment);
}

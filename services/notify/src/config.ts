import { z } from "zod";
import { env, loadConfig, type Environment } from "@platform/service-kit/config";

const schema = z.object({
  DATABASE_URL: env.postgresUrl("postgres://postgres@127.0.0.1:5432/platform"),
  DATABASE_POOL_MAX: env.positiveInt(10),
  GRPC_HOST: env.host("127.0.0.1"),
  GRPC_PORT: env.port(50052),
  METRICS_HOST: env.host("127.0.0.1"),
  METRICS_PORT: env.port(9466),
  LOG_LEVEL: env.logLevel(),
  SHUTDOWN_GRACE: env.duration(25_000),
  MIGRATE_ON_START: z
    .enum(["true", "false"])
    .default("true")
    .transform((v) => v === "true"),
  /** How long an Idempotency-Key is remembered. */
  IDEMPOTENCY_TTL: env.duration(24 * 3_600_000),
  /** How often expired idempotency keys are purged. */
  IDEMPOTENCY_PURGE_INTERVAL: env.duration(10 * 60_000),
});

export type NotifyConfig = z.infer<typeof schema>;
export const NOTIFY_SCHEMA = "notify";

export function loadNotifyConfig(environment: Environment): NotifyConfig {
  return loadConfig(schema, environment);
}

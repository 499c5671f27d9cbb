import { z } from "zod";
import { env, loadConfig, type Environment } from "@platform/service-kit/config";

const schema = z.object({
  GRPC_HOST: env.host("0.0.0.0"),
  GRPC_PORT: env.port(50052),
  METRICS_HOST: env.host("0.0.0.0"),
  METRICS_PORT: env.port(9466),
  LOG_LEVEL: env.logLevel(),
  SHUTDOWN_GRACE: env.duration(25_000),
});

export type NotifyConfig = z.infer<typeof schema>;

export function loadNotifyConfig(environment: Environment): NotifyConfig {
  return loadConfig(schema, environment);
}

import { z } from "zod";
import { env, loadConfig, type Environment } from "@platform/service-kit/config";

const schema = z.object({
  GRPC_HOST: env.host("127.0.0.1"),
  GRPC_PORT: env.port(50053),
  METRICS_HOST: env.host("127.0.0.1"),
  METRICS_PORT: env.port(9467),
  LOG_LEVEL: env.logLevel(),
  SHUTDOWN_GRACE: env.duration(25_000),
});

export type WebhooksConfig = z.infer<typeof schema>;

export function loadWebhooksConfig(environment: Environment): WebhooksConfig {
  return loadConfig(schema, environment);
}

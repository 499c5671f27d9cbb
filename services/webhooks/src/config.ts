import { z } from "zod";
import { grpcListenerSettings, loadConfig, processSettings, type Environment } from "@platform/service-kit/config";

const schema = z.object({
  ...grpcListenerSettings({ grpc: 50053, metrics: 9467 }),
  ...processSettings,
});

export type WebhooksConfig = z.infer<typeof schema>;

export function loadWebhooksConfig(environment: Environment): WebhooksConfig {
  return loadConfig(schema, environment);
}

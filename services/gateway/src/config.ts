import { z } from "zod";
import { databaseSettings, env, loadConfig, processSettings, type Environment } from "@platform/service-kit/config";

const schema = z.object({
  ...databaseSettings,
  ...processSettings,
  PORT: env.port(8080),
  HOST: env.host("127.0.0.1"),
  METRICS_HOST: env.host("127.0.0.1"),
  METRICS_PORT: env.port(9464),
  CATALOG_ADDR: z.string().min(1).default("127.0.0.1:50051"),
  NOTIFY_ADDR: z.string().min(1).default("127.0.0.1:50052"),
  WEBHOOKS_ADDR: z.string().min(1).default("127.0.0.1:50053"),
  /** Token bucket per API key on the tenant interface, for the whole fleet (see GATEWAY_REPLICAS). */
  RATE_LIMIT_PER_SECOND: z.coerce.number().positive().default(50),
  RATE_LIMIT_BURST: env.positiveInt(100),
  /** Replicas sharing the rate limit: each enforces 1/GATEWAY_REPLICAS of it. The chart sets it. */
  GATEWAY_REPLICAS: env.positiveInt(1),
  /** When set (https://docs.example.com/problems/), problem `type` is this + code. */
  PROBLEM_BASE_URI: z
    .string()
    .optional()
    .transform((v) => (v === "" ? undefined : v))
    .refine((v) => v === undefined || /^https:\/\/\S+$/.test(v), "must be an https:// URL"),
  /** Deadline of every gRPC call the gateway makes. */
  UPSTREAM_TIMEOUT: env.duration(5_000),
  /** How long a verified API key is trusted without a database read (revocation evicts at once). */
  API_KEY_CACHE_TTL: env.duration(30_000),
  /** When set (https://api.example.com), Link headers are absolute; otherwise path-absolute. */
  PUBLIC_BASE_URL: z
    .string()
    .optional()
    .refine(
      (v) => v === undefined || v === "" || /^https?:\/\/[^/]+$/.test(v),
      "must be an origin such as https://api.example.com",
    ),
});

export type GatewayConfig = z.infer<typeof schema>;
export const GATEWAY_SCHEMA = "gateway";

export function loadGatewayConfig(environment: Environment): GatewayConfig {
  return loadConfig(schema, environment);
}

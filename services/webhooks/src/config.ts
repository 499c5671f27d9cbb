import { z } from "zod";
import {
  databaseServiceSettings,
  env,
  idempotencySettings,
  loadConfig,
  type Environment,
} from "@platform/service-kit/config";
import { defaultRetryDelays, parseRetryDelays } from "./domain/retry-schedule.js";
import { parseSecretsKey } from "./domain/secret-box.js";

const flag = (fallback: boolean) =>
  z
    .enum(["true", "false"])
    .default(fallback ? "true" : "false")
    .transform((v) => v === "true");

/** A stream/subject namespace: empty in production; tests give each run its own. */
const namespace = z
  .string()
  .default("")
  .refine((v) => /^[A-Za-z0-9_]{0,32}$/.test(v), "must be 0-32 of A-Z a-z 0-9 _");

const schema = z.object({
  ...databaseServiceSettings({ grpc: 50053, metrics: 9467 }),
  ...idempotencySettings,
  NATS_URL: z.string().default("nats://127.0.0.1:4222"),
  /**
   * Prefix of every JetStream stream name and subject this service uses (`${ns}EVENTS`,
   * `${ns}events.<tenant>.<type>`): empty in production; each test run sets its own.
   */
  NATS_NAMESPACE: namespace,
  /** 32 bytes, base64 (key id k1), or `id:base64,...` with the first key active; see docs/operations.md. */
  SECRETS_KEY: z.string().transform((text, ctx) => {
    try {
      return parseSecretsKey(text);
    } catch (error) {
      ctx.addIssue({ code: "custom", message: (error as Error).message.replace(/^SECRETS_KEY: /, "") });
      return z.NEVER;
    }
  }),
  /** The waits after failed attempts 1..7. */
  WEBHOOKS_RETRY_DELAYS: z
    .string()
    .default(defaultRetryDelays)
    .transform((text, ctx) => {
      try {
        return parseRetryDelays(text);
      } catch (error) {
        ctx.addIssue({ code: "custom", message: (error as Error).message.replace(/^WEBHOOKS_RETRY_DELAYS: /, "") });
        return z.NEVER;
      }
    }),
  /** Lifts the address check on endpoint URLs (never the https rule): local development and tests only. */
  WEBHOOKS_ALLOW_PRIVATE_TARGETS: flag(false),
  /** How long one attempt may take, connection to last byte. */
  WEBHOOKS_DELIVERY_TIMEOUT: env.duration(10_000),
  /** Attempts in flight in this process. */
  WEBHOOKS_CONCURRENCY: env.positiveInt(64),
  /** Attempts in flight to one endpoint from this process. */
  WEBHOOKS_ENDPOINT_CONCURRENCY: env.positiveInt(8),
  /** How often the sweeper looks for due deliveries whose job message was lost. */
  WEBHOOKS_SWEEP_INTERVAL: env.duration(60_000),
  /** How far past due (and unleased) a delivery must be before the sweeper re-enqueues it. */
  WEBHOOKS_SWEEP_OVERDUE: env.duration(5 * 60_000),
  /** How long events and deliveries are kept (and redrivable). */
  WEBHOOKS_RETENTION: env.duration(30 * 86_400_000),
  /** How often the janitor removes what is older than the retention, and how many rows per batch. */
  WEBHOOKS_JANITOR_INTERVAL: env.duration(3_600_000),
  WEBHOOKS_JANITOR_BATCH: env.positiveInt(1000),
  /** How often the backlog gauges (pending deliveries, oldest waiting, per endpoint class) are measured. */
  WEBHOOKS_BACKLOG_INTERVAL: env.duration(15_000),
  /** How often the outbox relay looks for unpublished events when nothing woke it. */
  OUTBOX_POLL_INTERVAL: env.duration(1_000),
});

export type WebhooksConfig = z.infer<typeof schema>;

export const WEBHOOKS_SCHEMA = "webhooks";

export function loadWebhooksConfig(environment: Environment): WebhooksConfig {
  return loadConfig(schema, environment);
}

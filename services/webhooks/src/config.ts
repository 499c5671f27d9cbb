import { z } from "zod";
import {
  databaseServiceSettings,
  env,
  eventBusSettings,
  idempotencySettings,
  loadConfig,
  type Environment,
} from "@platform/service-kit/config";
import { defaultRetryDelays, parseRetryDelays } from "./domain/retry-delays.js";
import { parseSecretsKey } from "./domain/secret-box.js";
import { parseAllowedPorts } from "./domain/target-address.js";

const flag = (fallback: boolean) =>
  z
    .enum(["true", "false"])
    .default(fallback ? "true" : "false")
    .transform((v) => v === "true");

/** What a lease must leave beyond an attempt's timeout: signing, recording it, acking its job. */
export const leaseMarginMs = 5_000;

const schema = z
  .object({
    ...databaseServiceSettings({ grpc: 50053, metrics: 9467 }),
    ...idempotencySettings,
    ...eventBusSettings,
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
    /**
     * Ports endpoint URLs may use besides 443 (always allowed): a list and ranges such as
     * `8443,9000-9100`. WEBHOOKS_ALLOW_PRIVATE_TARGETS does not lift this rule.
     */
    WEBHOOKS_ALLOWED_PORTS: z
      .string()
      .default("443")
      .transform((text, ctx) => {
        try {
          return parseAllowedPorts(text);
        } catch (error) {
          ctx.addIssue({ code: "custom", message: (error as Error).message });
          return z.NEVER;
        }
      }),
    /** How long one attempt may take, connection to last byte. */
    WEBHOOKS_DELIVERY_TIMEOUT: env.duration(10_000),
    /**
     * How long a worker's claim on a delivery lasts: the lease on its row and the ack wait of its
     * job message. An attempt never outlives it (it must exceed WEBHOOKS_DELIVERY_TIMEOUT by 5 s);
     * after a crash mid-attempt the delivery is attempted again once it has run out.
     */
    WEBHOOKS_LEASE: env.duration(60_000),
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
    /** Redrives per second of a recovery (RecoverDeliveries), per recovery; decimals allowed (0.5: one every 2 s). */
    WEBHOOKS_RECOVER_RATE: z.coerce.number().positive().max(1000).default(10),
    /**
     * How long a runner's claim on a recovery lasts without progress: after a crash, another
     * replica continues the recovery once it has run out. Must exceed 1/WEBHOOKS_RECOVER_RATE by 1 s.
     */
    WEBHOOKS_RECOVER_LEASE: env.duration(30_000),
    /** How often an idle runner looks for a recovery to run. */
    WEBHOOKS_RECOVER_POLL_INTERVAL: env.duration(1_000),
  })
  .superRefine((config, ctx) => {
    if (config.WEBHOOKS_RECOVER_LEASE < 1000 / config.WEBHOOKS_RECOVER_RATE + 1000) {
      ctx.addIssue({
        code: "custom",
        path: ["WEBHOOKS_RECOVER_LEASE"],
        message: "must exceed the wait between two redrives (1/WEBHOOKS_RECOVER_RATE seconds) by at least 1s",
      });
    }
    if (config.WEBHOOKS_LEASE < config.WEBHOOKS_DELIVERY_TIMEOUT + leaseMarginMs) {
      ctx.addIssue({
        code: "custom",
        path: ["WEBHOOKS_LEASE"],
        message: "must exceed WEBHOOKS_DELIVERY_TIMEOUT by at least 5s",
      });
    }
  });

export type WebhooksConfig = z.infer<typeof schema>;

export const WEBHOOKS_SCHEMA = "webhooks";

/**
 * Where the service's unqualified names resolve: the delivery history (events, deliveries,
 * attempts), partitioned by day, in `webhooks_history` (migration 20261127200000), everything else in
 * `webhooks`. The previous release, on `webhooks` alone, still finds its old tables there.
 */
export const WEBHOOKS_SEARCH_PATH = ["webhooks_history", WEBHOOKS_SCHEMA] as const;

export function loadWebhooksConfig(environment: Environment): WebhooksConfig {
  return loadConfig(schema, environment);
}

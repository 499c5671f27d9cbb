import { z } from "zod";
import { tracingSettings } from "./tracing.js";

/** A configuration that failed validation; the message names every bad variable. */
export class ConfigError extends Error {
  override name = "ConfigError";
  constructor(readonly problems: string[]) {
    super(`invalid configuration: ${problems.join("; ")}`);
  }
}

export type Environment = Record<string, string | undefined>;

/**
 * Parses the environment once, at start-up, against a zod schema whose keys are the variable
 * names. Throws ConfigError naming each bad variable and what was wrong with it.
 */
export function loadConfig<S extends z.ZodObject>(schema: S, env: Environment): z.infer<S> {
  const result = schema.safeParse(env);
  const unsetInProduction = unsetMachineDefaults(schema, env);
  if (result.success && unsetInProduction.length === 0) return result.data;
  const problems = (result.success ? [] : result.error.issues).map((issue) => {
    const variable = issue.path.join(".") || "(environment)";
    const got = typeof issue.path[0] === "string" ? env[issue.path[0]] : undefined;
    // A malformed secret is still a secret: name the variable, never echo its value.
    return got === undefined || isSecretVariable(variable)
      ? `${variable}: ${issue.message}`
      : `${variable}: ${issue.message} (got ${JSON.stringify(got)})`;
  });
  throw new ConfigError([...problems, ...unsetInProduction]);
}

/**
 * Variables whose defaults point at the developer's own machine (its Postgres and NATS on
 * 127.0.0.1). In production (`NODE_ENV=production`, which every image sets) a missing one is a
 * configuration error, not a quiet attempt to reach the container's own loopback.
 */
const MACHINE_DEFAULTS = ["DATABASE_URL", "NATS_URL"];

function unsetMachineDefaults(schema: z.ZodObject, env: Environment): string[] {
  if (env.NODE_ENV !== "production") return [];
  return MACHINE_DEFAULTS.filter((name) => name in schema.shape && (env[name] ?? "") === "").map(
    (name) => `${name}: required when NODE_ENV=production (its default is this machine's 127.0.0.1)`,
  );
}

/** Words of a variable's name that make its value a secret wherever they stand (`WHATSAPP_APP_SECRET`). */
const SECRET_WORDS = new Set([
  "SECRET",
  "SECRETS",
  "TOKEN",
  "TOKENS",
  "PASSWORD",
  "PASSWORDS",
  "PASSWD",
  "CREDENTIAL",
  "CREDENTIALS",
]);

/**
 * Whether a variable holds a secret, judged by the words of its name (split at `_`): one of
 * SECRET, TOKEN, PASSWORD, PASSWD, CREDENTIAL (or their plurals) anywhere, or KEY / KEYS last
 * (`SECRETS_KEY`, `STRIPE_API_KEY`, `TLS_PRIVATE_KEY`). Whole words, so neither a setting that
 * merely mentions one (`WEBHOOKS_ALLOW_PRIVATE_TARGETS`, `API_KEY_CACHE_TTL`) nor a word that
 * contains one (`TOKENIZER_MODE`) is hidden.
 */
export function isSecretVariable(name: string): boolean {
  const words = name.toUpperCase().split("_");
  const last = words[words.length - 1];
  return last === "KEY" || last === "KEYS" || words.some((word) => SECRET_WORDS.has(word));
}

/** Reusable variable parsers, so every service spells the same kind of value the same way. */
export const env = {
  port: (fallback: number) => z.coerce.number().int().min(0).max(65535).default(fallback),
  positiveInt: (fallback: number) => z.coerce.number().int().positive().default(fallback),
  host: (fallback: string) => z.string().min(1).default(fallback),
  postgresUrl: (fallback: string) =>
    z
      .string()
      .default(fallback)
      .refine((v) => /^postgres(ql)?:\/\//.test(v), "must be a postgres:// URL"),
  logLevel: () => z.enum(["fatal", "error", "warn", "info", "debug", "trace", "silent"]).default("info"),
  duration: (fallbackMs: number) =>
    z
      .string()
      .optional()
      .transform((v, ctx) => {
        if (v === undefined || v === "") return fallbackMs;
        const ms = parseDuration(v);
        if (ms === undefined) {
          ctx.addIssue({ code: "custom", message: "must be a duration such as 500ms, 10s, 5m or 24h" });
          return z.NEVER;
        }
        return ms;
      }),
};

const units: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/** "250ms", "10s", "5m", "24h", "1d" -> milliseconds; undefined when malformed. */
export function parseDuration(text: string): number | undefined {
  const match = /^(\d+)(ms|s|m|h|d)$/.exec(text.trim());
  if (!match) return undefined;
  return Number(match[1]) * units[match[2]!]!;
}

/**
 * What every process reads: log level and its shutdown timings (shutdown.ts): how long it goes on
 * serving, not ready, after SIGTERM (0 by default: locally nothing routes by readiness, and the
 * gateways' round_robin clients leave a process at its GOAWAY, not at NOT_SERVING; the chart sets
 * 5 s for kube-proxy, the ingress and DNS; docs/operations.md, Shutdown), then how long in-flight
 * work may take.
 */
export const processSettings = {
  LOG_LEVEL: env.logLevel(),
  SHUTDOWN_DRAIN_DELAY: env.duration(0),
  SHUTDOWN_GRACE: env.duration(25_000),
  ...tracingSettings,
};

/** What every process with its own Postgres schema reads. */
export const databaseSettings = {
  DATABASE_URL: env.postgresUrl("postgres://postgres@127.0.0.1:5432/platform"),
  DATABASE_POOL_MAX: env.positiveInt(10),
  /** Run migrations at start-up (local runs); Kubernetes runs the `migrate` Job instead. */
  MIGRATE_ON_START: z
    .enum(["true", "false"])
    .default("true")
    .transform((v) => v === "true"),
};

/** A gRPC service's two listeners, loopback unless the operator or the chart says otherwise. */
export function grpcListenerSettings(ports: { grpc: number; metrics: number }) {
  return {
    GRPC_HOST: env.host("127.0.0.1"),
    GRPC_PORT: env.port(ports.grpc),
    METRICS_HOST: env.host("127.0.0.1"),
    METRICS_PORT: env.port(ports.metrics),
    /** Connections older than this get a GOAWAY, so clients re-resolve and rebalance (grpc-server.ts). */
    GRPC_MAX_CONNECTION_AGE: env.duration(30_000),
    /** How long calls on a connection past its age may still run. */
    GRPC_MAX_CONNECTION_AGE_GRACE: env.duration(10_000),
  };
}

/**
 * The settings every gRPC service with a database reads, under the same names and defaults:
 * its database, its two listeners, logging, shutdown grace and whether it migrates at start-up.
 */
export function databaseServiceSettings(ports: { grpc: number; metrics: number }) {
  return { ...databaseSettings, ...grpcListenerSettings(ports), ...processSettings };
}

/** The settings of a service that records Idempotency-Keys (service-kit idempotency.ts). */
export const idempotencySettings = {
  /** How long an Idempotency-Key is remembered. */
  IDEMPOTENCY_TTL: env.duration(24 * 3_600_000),
  /**
   * How long a claimed key answers 409 idempotency.in_progress before a retry may take it over:
   * the wait after a process died (kill -9) holding a claim.
   */
  IDEMPOTENCY_LEASE: env.duration(30_000),
  /** How often expired idempotency keys are purged. */
  IDEMPOTENCY_PURGE_INTERVAL: env.duration(10 * 60_000),
};

/**
 * The settings of a service on the event bus: its NATS and the namespace that prefixes every
 * stream name and subject (empty in production; each test run sets its own), and its outbox relay.
 */
export const eventBusSettings = {
  NATS_URL: z.string().default("nats://127.0.0.1:4222"),
  NATS_NAMESPACE: z
    .string()
    .default("")
    .refine((v) => /^[A-Za-z0-9_]{0,32}$/.test(v), "must be 0-32 of A-Z a-z 0-9 _"),
  /**
   * How many servers of a JetStream cluster keep each stream the service declares, and each of its
   * durable consumers (`num_replicas`; nats.ts): 1, 3 or 5. Applied at every start, so a changed
   * value scales the existing streams. Above 1 needs a cluster of at least that many servers.
   */
  NATS_STREAM_REPLICAS: z
    .enum(["1", "3", "5"], {
      error: "must be 1, 3 or 5 (an even count survives no more lost servers than the odd one below it)",
    })
    .default("1")
    .transform(Number),
  /** How often the outbox relay looks for events when no commit kicked it. */
  OUTBOX_POLL_INTERVAL: env.duration(1_000),
  /**
   * How long a published outbox row may wait for its consumer to remove it before it is published
   * again (a nats-server that lost its store lost it). Again is harmless: consumers are idempotent
   * on the event id.
   */
  OUTBOX_REPUBLISH_AFTER: env.duration(60_000),
};

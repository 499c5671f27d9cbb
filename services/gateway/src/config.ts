import { z } from "zod";
import {
  databaseSettings,
  env,
  idempotencySettings,
  loadConfig,
  processSettings,
  type Environment,
} from "@platform/service-kit/config";

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
  /**
   * Token bucket per API key on both interfaces, for the whole fleet: each of N live gateways
   * enforces 1/N of it, N counted by the fleet heartbeat below.
   */
  RATE_LIMIT_PER_SECOND: z.coerce.number().positive().default(50),
  RATE_LIMIT_BURST: env.positiveInt(100),
  /** How often a gateway refreshes its row in gateway.fleet_members and recounts the live ones. */
  FLEET_HEARTBEAT_INTERVAL: env.duration(2_000),
  /** A gateway whose heartbeat is older than this is counted out (one that died, by SIGKILL say). */
  FLEET_HEARTBEAT_WINDOW: env.duration(6_000),
  /** When set (https://docs.example.com/problems/), problem `type` is this + code. */
  PROBLEM_BASE_URI: z
    .string()
    .optional()
    .transform((v) => (v === "" ? undefined : v))
    .refine((v) => v === undefined || /^https:\/\/\S+$/.test(v), "must be an https:// URL"),
  /** Deadline of every gRPC call the gateway makes. */
  UPSTREAM_TIMEOUT: env.duration(5_000),
  /**
   * How often the gateway checks each downstream (grpc.health.v1) and its database in the
   * background, and each check's deadline. Two unanswered checks in a row mark it unreachable:
   * its calls are then refused at once (503) until a check is answered again.
   */
  DOWNSTREAM_CHECK_INTERVAL: env.duration(1_000),
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
  /**
   * Behind a reverse proxy or load balancer that sets X-Forwarded-Proto and X-Forwarded-For (and
   * strips what clients send): trust them for the request's scheme (the console's Secure,
   * __Host- cookie) and the client address (login throttling, rate limits by address). Off by
   * default: a client could otherwise claim any address.
   */
  TRUST_PROXY: z
    .enum(["true", "false"])
    .default("false")
    .transform((v) => v === "true"),
  /** Origin of the console in invitation and console-link URLs; default the gateway's local URL. */
  CONSOLE_BASE_URL: z
    .string()
    .optional()
    .transform((v) => (v === "" ? undefined : v))
    .refine(
      (v) => v === undefined || /^https?:\/\/[^/]+$/.test(v),
      "must be an origin such as https://console.example.com",
    ),
  /** A console session ends after this long without a request... */
  CONSOLE_SESSION_IDLE: env.duration(30 * 60_000),
  /** ...and this long after sign-in, whatever happens. */
  CONSOLE_SESSION_ABSOLUTE: env.duration(12 * 3_600_000),
  /** How long an invitation link (admin `user create`) stays valid. */
  CONSOLE_INVITATION_TTL: env.duration(7 * 86_400_000),
  /** How long a console link minted through the API stays valid (it is single-use in any case). */
  CONSOLE_LINK_TTL: env.duration(5 * 60_000),
  /** Sign-in attempts counted per account and per client address within one window. */
  CONSOLE_LOGIN_WINDOW: env.duration(15 * 60_000),
  CONSOLE_LOGIN_ACCOUNT_LIMIT: env.positiveInt(5),
  CONSOLE_LOGIN_ADDRESS_LIMIT: env.positiveInt(50),
  /**
   * The CSP frame-ancestors of the console: 'none' (default) or a space-separated list of the
   * partners' origins allowed to frame it (https://app.partner.example).
   */
  CONSOLE_FRAME_ANCESTORS: z
    .string()
    .default("'none'")
    .refine(
      (v) => v === "'none'" || v === "'self'" || v.split(/\s+/).every((o) => /^https:\/\/[^/\s;,']+$/.test(o)),
      "must be 'none', 'self' or space-separated https:// origins",
    ),
  /**
   * Secret. The WhatsApp app's app secret: keys the X-Hub-Signature-256 of the provider's callbacks
   * (docs/notifications.md "Provider callbacks"). Unset (with WHATSAPP_VERIFY_TOKEN): the callback
   * path answers 404 provider.callbacks_not_configured.
   */
  WHATSAPP_APP_SECRET: z
    .string()
    .optional()
    .transform((v) => (v === "" ? undefined : v)),
  /** Secret. What the subscription handshake's hub.verify_token must be (set the same in the app's webhook settings). */
  WHATSAPP_VERIFY_TOKEN: z
    .string()
    .optional()
    .transform((v) => (v === "" ? undefined : v)),
  /** Largest callback body taken (413 above it, before more is read); the provider's batches stay well below. */
  WHATSAPP_CALLBACK_MAX_BYTES: env.positiveInt(3 * 1024 * 1024),
  ...idempotencySettings,
});

const checkedSchema = schema.superRefine((config, ctx) => {
  if (config.FLEET_HEARTBEAT_WINDOW < 2 * config.FLEET_HEARTBEAT_INTERVAL) {
    ctx.addIssue({
      code: "custom",
      path: ["FLEET_HEARTBEAT_WINDOW"],
      message: "must be at least twice FLEET_HEARTBEAT_INTERVAL, so one late heartbeat does not count a gateway out",
    });
  }
  if ((config.WHATSAPP_APP_SECRET === undefined) !== (config.WHATSAPP_VERIFY_TOKEN === undefined)) {
    ctx.addIssue({
      code: "custom",
      path: [config.WHATSAPP_APP_SECRET === undefined ? "WHATSAPP_APP_SECRET" : "WHATSAPP_VERIFY_TOKEN"],
      message: "is required with the other of WHATSAPP_APP_SECRET and WHATSAPP_VERIFY_TOKEN",
    });
  }
  if (config.WHATSAPP_CALLBACK_MAX_BYTES > 3_500_000) {
    ctx.addIssue({
      code: "custom",
      path: ["WHATSAPP_CALLBACK_MAX_BYTES"],
      message: "must be at most 3500000 (a batch travels to notify in one gRPC message of at most 4 MiB)",
    });
  }
  if (config.DOWNSTREAM_CHECK_INTERVAL < 100) {
    ctx.addIssue({
      code: "custom",
      path: ["DOWNSTREAM_CHECK_INTERVAL"],
      message: "must be at least 100ms (it is also each check's deadline)",
    });
  }
});

export type GatewayConfig = z.infer<typeof schema>;
export const GATEWAY_SCHEMA = "gateway";

export function loadGatewayConfig(environment: Environment): GatewayConfig {
  return loadConfig(checkedSchema, environment);
}

import { z } from "zod";
import {
  databaseServiceSettings,
  env,
  eventBusSettings,
  idempotencySettings,
  loadConfig,
  type Environment,
} from "@platform/service-kit/config";
import { parseSecretsKey } from "@platform/service-kit/secret-box";
import { parseRequiredCapabilities } from "./domain/activation.js";
import { notificationTypes, type NotificationType } from "./domain/notification.js";
import { DEFAULT_TESTING_ALLOWANCE } from "./domain/testing-allowance.js";
import { defaultBurstFor, DEFAULT_MESSAGES_PER_SECOND } from "./domain/pacing.js";

/** A whole number from 1 to `max`, with a message an operator understands. */
const wholeNumber = (fallback: number, what: string, max: number) =>
  z
    .string()
    .optional()
    .transform((v, ctx) => {
      if (v === undefined || v.trim() === "") return fallback;
      if (!/^[0-9]+$/.test(v.trim()) || Number(v) < 1 || Number(v) > max) {
        ctx.addIssue({ code: "custom", message: `must be a whole number of ${what} from 1 to ${max}` });
        return z.NEVER;
      }
      return Number(v);
    });

/** Default WhatsApp template per notification type; WHATSAPP_TEMPLATES overrides any of them. */
export const defaultWhatsAppTemplates: Record<NotificationType, { name: string; language: string }> = {
  reminder: { name: "appointment_reminder", language: "en_US" },
  no_show: { name: "appointment_no_show", language: "en_US" },
  cancelled: { name: "appointment_cancelled", language: "en_US" },
  rescheduled: { name: "appointment_rescheduled", language: "en_US" },
  update: { name: "business_update", language: "en_US" },
};

const whatsAppTemplates = z
  .string()
  .optional()
  .transform((v, ctx) => {
    if (v === undefined || v.trim() === "") return defaultWhatsAppTemplates;
    let parsed: unknown;
    try {
      parsed = JSON.parse(v);
    } catch {
      ctx.addIssue({ code: "custom", message: 'must be JSON such as {"reminder":{"name":"...","language":"en_US"}}' });
      return z.NEVER;
    }
    const entry = z.object({
      name: z.string().regex(/^[a-z0-9_]{1,512}$/),
      language: z.string().regex(/^[A-Za-z_]{2,10}$/),
    });
    const result = z.partialRecord(z.enum(notificationTypes), entry).safeParse(parsed);
    if (!result.success) {
      ctx.addIssue({
        code: "custom",
        message: `must map ${notificationTypes.join(", ")} to {name, language}: ${result.error.issues[0]?.message ?? ""}`,
      });
      return z.NEVER;
    }
    return { ...defaultWhatsAppTemplates, ...result.data };
  });

const schema = z
  .object({
    ...databaseServiceSettings({ grpc: 50052, metrics: 9466 }),
    ...idempotencySettings,
    ...eventBusSettings,
    /**
     * How long a send holds its Idempotency-Key before a retry may settle it as outcome unknown
     * (the sender died between recording the command and recording the provider's answer). Must
     * exceed WHATSAPP_TIMEOUT so a live send is never settled under it.
     */
    NOTIFICATION_LEASE: env.duration(30_000),
    /**
     * The projector consumer's ack wait: events fetched by a process that died come back to another
     * after this, so the polls show them at most this late (plus a fetch).
     */
    PROJECTIONS_ACK_WAIT: env.duration(30_000),
    /**
     * How long the projector lets a batch gather after its first event before applying it in one
     * commit: the polls show an event up to this much later, and at a steady rate the projector
     * commits once per window instead of once per event (bench:notify's commits per send).
     */
    PROJECTIONS_GATHER: env.duration(100),
    /**
     * How long notify gathers the events it announces before they go to the stream together: a
     * send's outcome event waits up to this long for others to share its socket write (service-kit
     * publishAfterCommit), and while kicks keep coming the outbox relay starts a pass at most this
     * often. Less CPU per send (a write costs more than the messages in it), for up to this much
     * more delay before an event reaches the stream, the webhooks and the poll reads. 0: at once.
     */
    OUTBOX_GATHER: env.duration(50),
    /**
     * Sends that may share the send path's statements (record, outcome) and so their commits: the
     * sends that arrive while the previous statement runs go together in the next, up to this many
     * (db/notification-store.ts). No timer: an idle path sends each at once. 1: each send its own.
     */
    NOTIFY_SEND_BATCH: env.positiveInt(32),
    /** How many of those shared statements of each kind run at once (each on a connection of its own). */
    NOTIFY_SEND_BATCHES_IN_FLIGHT: env.positiveInt(2),
    /** The testing plan's sends per tenant and UTC month (issue 22; tests use a small one). */
    NOTIFY_TESTING_ALLOWANCE: env.positiveInt(DEFAULT_TESTING_ALLOWANCE),
    /**
     * Pacing (docs/notifications.md, "Pacing"): the sends per second through one number, across
     * every notify replica (the Cloud API's default throughput is 80). Until tenants connect their
     * own channels, every tenant's number (the process-wide one, or on the sandbox a stand-in per
     * tenant) has this pace.
     */
    NOTIFY_CHANNEL_MESSAGES_PER_SECOND: wholeNumber(DEFAULT_MESSAGES_PER_SECOND, "messages per second", 1_000_000),
    /**
     * Sends admitted at once on a number after a quiet spell; unset (0 here): one second's worth,
     * NOTIFY_CHANNEL_MESSAGES_PER_SECOND. 1 is strict: never more than the throughput in any one
     * second; B lets a second after a quiet spell carry up to B − 1 more.
     */
    NOTIFY_CHANNEL_BURST: wholeNumber(0, "messages", 1_000_000),
    /** on (default); off: no pacing (the provider's own throttling answers 130429): benchmarks only. */
    NOTIFY_CHANNEL_PACING: z.enum(["on", "off"]).default("on"),
    /**
     * The key ring sealing each tenant's WhatsApp access token at rest (as webhooks seals endpoint
     * secrets): 32 bytes, base64 (key id k1), or `id:base64,...` with the first key active.
     */
    SECRETS_KEY: z.string().transform((text, ctx) => {
      try {
        return parseSecretsKey(text);
      } catch (error) {
        ctx.addIssue({ code: "custom", message: (error as Error).message.replace(/^SECRETS_KEY: /, "") });
        return z.NEVER;
      }
    }),
    /**
     * How often each connected number is read again from the Cloud API (status, quality rating):
     * its result is the messaging_channel capability check. 0: no periodic check (connecting and
     * the provider's callbacks still check).
     */
    NOTIFY_CHANNEL_CHECK_INTERVAL: env.duration(15 * 60_000),
    /** sandbox (default): accept and record, send nothing; whatsapp: the WhatsApp Business Cloud API. */
    NOTIFY_CHANNEL_PROVIDER: z.enum(["sandbox", "whatsapp"]).default("sandbox"),
    /**
     * Secret. The fallback for tenants without a connected channel (PUT .../channel): a
     * system-user access token with whatsapp_business_messaging permission. Optional.
     */
    WHATSAPP_ACCESS_TOKEN: z.string().optional(),
    WHATSAPP_PHONE_NUMBER_ID: z
      .string()
      .regex(/^[0-9A-Za-z_-]{1,64}$/)
      .optional(),
    WHATSAPP_API_BASE_URL: z
      .string()
      .default("https://graph.facebook.com/v21.0")
      .refine((v) => /^https?:\/\/[^\s]+$/.test(v), "must be an http(s) URL"),
    WHATSAPP_TEMPLATES: whatsAppTemplates,
    /**
     * Deadline of one provider request; past it the outcome is unknown. Kept below the gateway's
     * UPSTREAM_TIMEOUT (5 s) so the partner hears "unknown" rather than "unavailable".
     */
    WHATSAPP_TIMEOUT: env.duration(3_000),
    /**
     * How often the provider callback pass runs (callbacks/provider-callback-applier.ts): it applies
     * statuses that arrived before their send's outcome was recorded, and batches whose application
     * failed or was cut short by a crash.
     */
    PROVIDER_CALLBACK_PASS_INTERVAL: env.duration(2_000),
    /** How long a batch whose application failed waits before the pass tries it again. */
    PROVIDER_CALLBACK_RETRY_DELAY: env.duration(30_000),
    /**
     * The capabilities activation requires to pass (comma list of a-z 0-9 _ names): a tenant goes
     * live once every one of them passed its check and none is failing.
     */
    NOTIFY_REQUIRED_CAPABILITIES: z
      .string()
      .default("messaging_channel")
      .transform((value, ctx) => {
        try {
          const names = parseRequiredCapabilities(value);
          if (names.length === 0) throw new Error("name at least one capability");
          return names;
        } catch (error) {
          ctx.addIssue({ code: "custom", message: (error as Error).message });
          return z.NEVER;
        }
      }),
  })
  .superRefine((config, ctx) => {
    // The process-wide number is an optional fallback (tenants connect their own), but it is
    // both settings or neither: a token without a number (or the reverse) is a mistake.
    if (Boolean(config.WHATSAPP_ACCESS_TOKEN) !== Boolean(config.WHATSAPP_PHONE_NUMBER_ID)) {
      for (const name of ["WHATSAPP_ACCESS_TOKEN", "WHATSAPP_PHONE_NUMBER_ID"] as const) {
        if (!config[name]) {
          const other = name === "WHATSAPP_ACCESS_TOKEN" ? "WHATSAPP_PHONE_NUMBER_ID" : "WHATSAPP_ACCESS_TOKEN";
          ctx.addIssue({ code: "custom", path: [name], message: `is required when ${other} is set` });
        }
      }
    }
    if (config.NOTIFICATION_LEASE <= config.WHATSAPP_TIMEOUT) {
      ctx.addIssue({ code: "custom", path: ["NOTIFICATION_LEASE"], message: "must be longer than WHATSAPP_TIMEOUT" });
    }
  });

export type NotifyConfig = z.infer<typeof schema>;
export const NOTIFY_SCHEMA = "notify";

export function loadNotifyConfig(environment: Environment): NotifyConfig {
  const config = loadConfig(schema, environment);
  // An unset burst is one second's worth of the number's pace.
  return {
    ...config,
    NOTIFY_CHANNEL_BURST: config.NOTIFY_CHANNEL_BURST || defaultBurstFor(config.NOTIFY_CHANNEL_MESSAGES_PER_SECOND),
  };
}

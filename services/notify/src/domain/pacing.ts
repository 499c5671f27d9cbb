import { DomainError } from "@platform/service-kit/errors";

/**
 * Pacing (docs/notifications.md, "Pacing"): the sends through one WhatsApp number, from every
 * notify replica together, never exceed the number's throughput. The limiter is a GCRA (generic
 * cell rate algorithm) row per number in notify's Postgres, checked and advanced inside the send's
 * first transaction (record_send, migration 20261127120000) with the database's clock; a refused
 * send rolls that transaction back, so it leaves nothing behind.
 *
 * GCRA keeps one instant per number, its theoretical arrival time `tat`. With the emission interval
 * T = 1 / perSecond and the tolerance τ = (burst − 1) · T, a send at `now` is admitted when
 * `tat − now ≤ τ`, and then `tat := max(tat, now) + T`; otherwise it waits `tat − τ − now`. In any
 * interval of t seconds at most `burst + perSecond · t` sends are admitted (fewer than
 * `perSecond + burst` in any one second); with burst 1 never more than `perSecond` in any second.
 */
export interface Pace {
  /** The limiter's row: the number the send goes through (`whatsapp:<phone number id>`, `sandbox:<tenant>`). */
  key: string;
  /** Sustained sends per second through the number (the channel's throughput). */
  perSecond: number;
  /** Sends admitted at once after a quiet spell (at least 1). */
  burst: number;
}

/** A tenant's connected number (its channel), when it has one: the number and its throughput. */
export interface PacedNumber {
  phoneNumberId: string;
  messagesPerSecond?: number;
}

/**
 * Which number a tenant's send goes through and at what pace; undefined: not paced. `number`: the
 * tenant's connected channel, when it has one (else the process-wide number or the sandbox's). May
 * answer asynchronously; it is awaited before the send's first statement.
 */
export type PaceOf = (tenantId: string, number?: PacedNumber) => Pace | undefined | Promise<Pace | undefined>;

/** The Cloud API's default throughput per business number (Meta: 80 messages per second). */
export const DEFAULT_MESSAGES_PER_SECOND = 80;
/**
 * The burst when none is set: one second's worth (`perSecond`), so a partner's batch of up to a
 * second's sends goes at once after a quiet spell; burst 1 is the strict alternative (see Pace).
 */
export const defaultBurstFor = (perSecond: number): number => Math.max(1, Math.floor(perSecond));

export interface PaceSettings {
  provider: "sandbox" | "whatsapp";
  /** The process-wide number (WHATSAPP_PHONE_NUMBER_ID) when the provider is whatsapp. */
  phoneNumberId: string | undefined;
  perSecond: number;
  burst: number;
  /** false: no pacing at all (NOTIFY_CHANNEL_PACING=off). */
  enabled: boolean;
}

/**
 * The one place that says which limiter row a send uses: a tenant's connected number (PUT
 * .../channel) at its own `messagesPerSecond`, with one second's worth of burst; without one, the
 * process-wide number (or, on the sandbox, a stand-in number per tenant) at the configured pace.
 */
export function paceFrom(settings: PaceSettings): (tenantId: string, number?: PacedNumber) => Pace | undefined {
  if (!settings.enabled) return () => undefined;
  const { perSecond, burst } = settings;
  const fallback = paceOfFallback(settings);
  return (tenantId, number) => {
    if (number === undefined) return fallback(tenantId);
    const own = number.messagesPerSecond ?? perSecond;
    return {
      key: `whatsapp:${number.phoneNumberId}`,
      perSecond: own,
      burst: number.messagesPerSecond === undefined ? burst : defaultBurstFor(own),
    };
  };
}

function paceOfFallback(settings: PaceSettings): (tenantId: string) => Pace {
  const { perSecond, burst } = settings;
  if (settings.provider === "whatsapp") {
    const pace: Pace = { key: `whatsapp:${settings.phoneNumberId ?? ""}`, perSecond, burst };
    return () => pace;
  }
  return (tenantId) => ({ key: `sandbox:${tenantId}`, perSecond, burst });
}

/** What record_send takes: the emission interval and the tolerance, in seconds. */
export function gcraParameters(pace: Pace): { intervalSeconds: number; toleranceSeconds: number } {
  if (!(pace.perSecond > 0) || !Number.isFinite(pace.perSecond))
    throw new RangeError(`perSecond must be a positive number, not ${pace.perSecond}`);
  if (!Number.isInteger(pace.burst) || pace.burst < 1)
    throw new RangeError(`burst must be a positive integer, not ${pace.burst}`);
  const intervalSeconds = 1 / pace.perSecond;
  return { intervalSeconds, toleranceSeconds: (pace.burst - 1) * intervalSeconds };
}

/** The SQLSTATE record_send raises when the number is over its pace (the transaction rolls back). */
export const PACED_SQLSTATE = "PN429";

/** Whole seconds to wait for a fractional wait: at least 1 (HTTP Retry-After is whole seconds). */
export function retryAfterSeconds(waitSeconds: number): number {
  return Math.max(1, Math.ceil(waitSeconds));
}

/**
 * A send refused by the pacing: nothing was recorded, counted, sent or announced, and the
 * Idempotency-Key is free. It shares partner.channel_rate_limited with the provider's own
 * throttling (130429): the partner's reaction is the same (wait Retry-After, retry with the same key).
 */
export class ChannelPacedError extends DomainError {
  override name = "ChannelPacedError";
  constructor(readonly waitSeconds: number) {
    super(
      "resource_exhausted",
      "partner.channel_rate_limited",
      "the messaging channel's number is at its throughput; nothing was sent; retry after Retry-After with the same Idempotency-Key",
      { retryAfterSeconds: retryAfterSeconds(waitSeconds) },
    );
  }
}

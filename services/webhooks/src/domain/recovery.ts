/**
 * Recovering an endpoint (RecoverDeliveries, after Svix's endpoint recover): every failed
 * (awaiting_retry) or dead-lettered delivery created in [since, until) is redriven, one at a time,
 * at a fixed rate. The window's rules, the states of a recovery and the pacing are decided here.
 */
import { DomainError, InvalidArgumentError, NotFoundError } from "@platform/service-kit/errors";
import type { DeliveryStatus } from "./delivery-state.js";

export type RecoveryState = "queued" | "running" | "completed" | "failed";

/** The statuses a recovery redrives: the failed ones (a single redrive also resends a succeeded one). */
export const recoverableStatuses: readonly DeliveryStatus[] = ["awaiting_retry", "dead_lettered"];

export interface RecoveryWindow {
  since: Date;
  /** Exclusive; the recovery's creation time when not given. */
  until: Date;
  /** Whether the caller gave `until`. */
  untilGiven: boolean;
}

const windowInvalid = (message: string) => new InvalidArgumentError("webhook.recovery_window_invalid", message);

function instant(text: string, field: string): Date {
  // RFC 3339 with a zone: a bare date or a local time would mean different moments to different callers.
  if (!/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:\d{2})$/i.test(text)) {
    throw windowInvalid(`${field} must be an RFC 3339 timestamp with a zone, e.g. 2026-07-01T10:00:00Z`);
  }
  const date = new Date(text);
  if (Number.isNaN(date.getTime())) throw windowInvalid(`${field} is not a valid timestamp`);
  return date;
}

/**
 * `since` not in the future and not older than the retention (deliveries older than it are no
 * longer redrivable: WEBHOOKS_RETENTION, 30 days); `until` (optional) after `since`.
 */
export function recoveryWindow(
  input: { since: string; until: string | undefined },
  { now, retentionMs }: { now: Date; retentionMs: number },
): RecoveryWindow {
  const since = instant(input.since, "since");
  if (since.getTime() > now.getTime()) throw windowInvalid("since is in the future");
  const oldest = new Date(now.getTime() - retentionMs);
  if (since.getTime() < oldest.getTime()) {
    const days = Math.round((retentionMs / 86_400_000) * 100) / 100;
    throw windowInvalid(
      `since is older than the ${days}-day retention: deliveries created before ${oldest.toISOString()} ` +
        "can no longer be redriven",
    );
  }
  if (input.until === undefined) return { since, until: now, untilGiven: false };
  const until = instant(input.until, "until");
  if (until.getTime() <= since.getTime()) throw windowInvalid("until must be after since");
  return { since, until, untilGiven: true };
}

/**
 * The pacing of a recovery at `ratePerSecond`: a redrive is due 1 / rate seconds after the
 * previous one began (the first at once), so redrives are never closer than that and N of them
 * take at least (N - 1) / rate seconds. A slow step is never made up for by a quicker next one.
 */
export function nextRedriveAt(previousRedriveAtMs: number | undefined, ratePerSecond: number): number {
  return previousRedriveAtMs === undefined ? 0 : previousRedriveAtMs + 1000 / ratePerSecond;
}

export class EndpointPausedError extends DomainError {
  override name = "EndpointPausedError";
  constructor() {
    super(
      "failed_precondition",
      "webhook.endpoint_paused",
      "the endpoint is paused: resume it first (resume releases its held deliveries), then recover",
    );
  }
}

export class RecoveryInProgressError extends DomainError {
  override name = "RecoveryInProgressError";
  constructor(readonly recoveryId: string) {
    super(
      "failed_precondition",
      "webhook.recovery_in_progress",
      `recovery ${recoveryId} of this endpoint is still running; follow it, then recover again`,
    );
  }
}

export class RecoveryNotFoundError extends NotFoundError {
  override name = "RecoveryNotFoundError";
  constructor() {
    super("webhook.recovery_not_found", "no recovery with this id for this endpoint");
  }
}

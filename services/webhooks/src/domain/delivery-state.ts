/**
 * The delivery state machine: the delivery life cycle of spec 3.3 as pure transitions. The waits
 * between attempts are retry-delays.ts's.
 *
 *   new delivery ──(endpoint paused)──> held ──resume──> pending
 *        │                                ^
 *        v                                │ pause (before the attempt is made)
 *     pending / awaiting_retry ───────────┘
 *        │ attempt
 *        ├─ 2xx ─────────────────────────> succeeded
 *        ├─ failure, attempts < 8 ───────> awaiting_retry (next at now + delay[attempts-1], or later
 *        │                                 when a 429/503 asked so with Retry-After)
 *        └─ failure, attempt 8 ──────────> dead_lettered, and the endpoint is paused
 *   succeeded / dead_lettered / awaiting_retry ──redrive (within 30 days)──> pending (a fresh run of 8), or held
 *
 * Nothing here reads a clock: `now` is always an argument.
 */
import { DomainError, NotFoundError } from "@platform/service-kit/errors";
import { maxAttempts, nextAttemptDue, retryDelayCount } from "./retry-delays.js";

export type DeliveryStatus = "pending" | "succeeded" | "awaiting_retry" | "dead_lettered" | "held";

export const deliveryStatuses: readonly DeliveryStatus[] = [
  "pending",
  "succeeded",
  "awaiting_retry",
  "dead_lettered",
  "held",
];

/** Events are retained 30 days for redrive (spec 6.1). */
export const redriveWindowMs = 30 * 24 * 60 * 60 * 1000;

export interface DeliveryState {
  status: DeliveryStatus;
  /** Attempts made in the current run (a redrive starts a new run at 0). */
  attempts: number;
  /** When the next attempt is due; null when none is scheduled (succeeded, dead_lettered, held). */
  nextAttemptAt: Date | null;
  /** When the event entered the webhooks service: the 30-day redrive window counts from here. */
  createdAt: Date;
}

export type AttemptVerdict = { ok: true } | { ok: false };

export interface Transition {
  state: DeliveryState;
  /** The endpoint must be paused (and flagged for attention): set when a delivery dead-letters. */
  pauseEndpoint: boolean;
}

export class DeliveryTransitionError extends DomainError {
  override name = "DeliveryTransitionError";
  constructor(
    readonly status: DeliveryStatus,
    action: string,
  ) {
    super("failed_precondition", "webhook.delivery_transition_invalid", `cannot ${action} a ${status} delivery`);
  }
}

export class DeliveryNotRedrivableError extends DomainError {
  override name = "DeliveryNotRedrivableError";
  constructor(readonly status: DeliveryStatus) {
    super(
      "failed_precondition",
      "webhook.delivery_not_redrivable",
      `only a succeeded, dead-lettered or failed (awaiting retry) delivery can be redriven; this one is ${status}`,
    );
  }
}

export class RedriveWindowClosedError extends DomainError {
  override name = "RedriveWindowClosedError";
  constructor() {
    super("failed_precondition", "webhook.redrive_window_closed", "the event is older than the 30-day retention");
  }
}

/** No delivery with this id belongs to the endpoint of the tenant. */
export class DeliveryNotFoundError extends NotFoundError {
  override name = "DeliveryNotFoundError";
  constructor() {
    super("webhook.delivery_not_found", "no delivery with this id for this endpoint");
  }
}

export interface AttemptOptions {
  /** When the attempt ended: the wait before the next one counts from here. */
  now: Date;
  delaysMs: readonly number[];
  endpointPaused: boolean;
  /** The wait a 429 or 503 asked for with Retry-After (retry-delays.ts nextAttemptDue). */
  retryAfterMs?: number | null;
}

/** A delivery for a matching event: due now, or held while the endpoint is paused. */
export function newDelivery(options: { now: Date; endpointPaused: boolean }): DeliveryState {
  return options.endpointPaused
    ? { status: "held", attempts: 0, nextAttemptAt: null, createdAt: options.now }
    : { status: "pending", attempts: 0, nextAttemptAt: options.now, createdAt: options.now };
}

/**
 * The outcome of one attempt. Only a pending or awaiting_retry delivery can be attempted. A
 * failure before the 8th schedules the next attempt (or holds the delivery if the endpoint was
 * paused meanwhile); the 8th failure dead-letters it and pauses the endpoint.
 */
export function recordAttempt(state: DeliveryState, verdict: AttemptVerdict, options: AttemptOptions): Transition {
  if (state.status !== "pending" && state.status !== "awaiting_retry") {
    throw new DeliveryTransitionError(state.status, "attempt");
  }
  if (options.delaysMs.length !== retryDelayCount) {
    throw new TypeError(`the retry schedule needs exactly ${retryDelayCount} delays`);
  }
  const attempts = state.attempts + 1;
  if (verdict.ok) {
    return { state: { ...state, status: "succeeded", attempts, nextAttemptAt: null }, pauseEndpoint: false };
  }
  if (attempts >= maxAttempts) {
    return { state: { ...state, status: "dead_lettered", attempts, nextAttemptAt: null }, pauseEndpoint: true };
  }
  if (options.endpointPaused) {
    return { state: { ...state, status: "held", attempts, nextAttemptAt: null }, pauseEndpoint: false };
  }
  const delay = options.delaysMs[attempts - 1]!;
  return {
    state: {
      ...state,
      status: "awaiting_retry",
      attempts,
      nextAttemptAt: nextAttemptDue(options.now, delay, options.retryAfterMs ?? null),
    },
    pauseEndpoint: false,
  };
}

/**
 * The statuses in which a claimed attempt moves its delivery (recordClaimedAttempt); in any other
 * (a final status reached meanwhile) the attempt is recorded and the delivery keeps its status.
 * Of these, a success always ends the delivery succeeded.
 */
export const statusesAnAttemptMoves: readonly DeliveryStatus[] = ["pending", "awaiting_retry", "held"];

/**
 * The outcome of an attempt made under a claim (the worker held the delivery while it sent). If
 * the endpoint was paused meanwhile and the delivery held, the attempt still counts: a success
 * ends it, a failure keeps it held (or dead-letters it on the 8th). Undefined when the delivery
 * reached a final status in between (nothing to change but the record of the attempt).
 */
export function recordClaimedAttempt(
  state: DeliveryState,
  verdict: AttemptVerdict,
  options: AttemptOptions,
): Transition | undefined {
  if (state.status === "held") {
    return recordAttempt({ ...state, status: "awaiting_retry" }, verdict, { ...options, endpointPaused: true });
  }
  if (!statusesAnAttemptMoves.includes(state.status)) return undefined;
  return recordAttempt(state, verdict, options);
}

/** The endpoint is paused: a delivery waiting for its (next) attempt is held instead. */
export function hold(state: DeliveryState): DeliveryState {
  if (state.status === "held") return state;
  if (state.status !== "pending" && state.status !== "awaiting_retry")
    throw new DeliveryTransitionError(state.status, "hold");
  return { ...state, status: "held", nextAttemptAt: null };
}

/**
 * The endpoint is resumed: a held delivery is due now, as pending when it was never attempted in
 * this run and as awaiting_retry when it was. Attempts made so far still count toward the 8.
 */
export function release(state: DeliveryState, now: Date): DeliveryState {
  if (state.status !== "held") throw new DeliveryTransitionError(state.status, "release");
  return { ...state, status: state.attempts === 0 ? "pending" : "awaiting_retry", nextAttemptAt: now };
}

/** Whether a delivery created at `createdAt` may still be redriven at `now`. */
export function withinRedriveWindow(createdAt: Date, now: Date, windowMs = redriveWindowMs): boolean {
  return now.getTime() - createdAt.getTime() < windowMs;
}

/**
 * The statuses RedriveDelivery accepts: a delivery that is over (succeeded: a resend, as Svix's
 * "resend"; dead-lettered) or failed and awaiting its retry. A pending or held one is still on its
 * way: it is refused (webhook.delivery_not_redrivable).
 */
export const redrivableStatuses: readonly DeliveryStatus[] = ["succeeded", "dead_lettered", "awaiting_retry"];

/**
 * Redrive of a delivery in one of `statuses` (default redrivableStatuses; a recovery passes its
 * own, narrower list) while the event is retained (30 days). It goes through the same pipeline
 * again: a fresh run of 8 attempts, due now, or held when the endpoint is still paused (as it is
 * after a dead-letter until resumed). The attempts already made stay, numbered on.
 */
export function redrive(
  state: DeliveryState,
  options: { now: Date; endpointPaused: boolean; windowMs?: number; statuses?: readonly DeliveryStatus[] },
): DeliveryState {
  if (!(options.statuses ?? redrivableStatuses).includes(state.status)) {
    throw new DeliveryNotRedrivableError(state.status);
  }
  if (!withinRedriveWindow(state.createdAt, options.now, options.windowMs)) throw new RedriveWindowClosedError();
  return options.endpointPaused
    ? { ...state, status: "held", attempts: 0, nextAttemptAt: null }
    : { ...state, status: "pending", attempts: 0, nextAttemptAt: options.now };
}

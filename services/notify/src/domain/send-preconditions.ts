import { DomainError } from "@platform/service-kit/errors";
import { TenantNotFoundError, type TenantPlan } from "./tenant.js";
import { DEFAULT_TESTING_ALLOWANCE } from "./testing-allowance.js";

/**
 * What must hold before a notification is sent (spec 4.2 consent, the testing plan's allowance),
 * and which refusal wins when several fail. The rule is written twice on purpose: here as plain
 * functions, and in the plpgsql function `record_send` (the 23-argument form the send path calls,
 * `recordSendV2` in migration 20261124170000_tenant_plan_changes; the 15-argument form that
 * 20261122010000_create_notifications created stays for the previous release), which is its
 * atomic enforcement: it reads the facts, claims the Idempotency-Key, counts the send and records
 * the command in one statement, so no concurrent send can slip between a check and its write.
 * One table of cases (send-preconditions.cases.ts) runs against both (send-preconditions.test.ts
 * here, test/send-preconditions.test.ts against record_send on real Postgres), so neither can
 * change alone.
 *
 * In record_send's order:
 *   1. a live claim on the Idempotency-Key: the request is a repeat, answered from the key
 *      (notification-repeat.ts) before any precondition is looked at;
 *   2. the tenant exists                         tenant.not_found
 *   3. the tenant is activated                   account.tenant_not_activated
 *   4. its messaging channel is ready            partner.channel_not_ready
 *   5. the recipient has not opted out           partner.recipient_opted_out
 *   6. on the `testing` plan, fewer than the allowance's sends were counted this UTC month
 *                                                account.testing_allowance_exhausted
 *      (a `commercial` tenant's sends are not counted when made, and never refused; a move back
 *      to testing recounts the month's sends on both plans: testing-allowance.ts).
 */

/** The testing plan's sends per tenant and UTC month by default (NOTIFY_TESTING_ALLOWANCE sets it). */
export const TESTING_ALLOWANCE_PER_MONTH = DEFAULT_TESTING_ALLOWANCE;

/** UTC calendar month of `at`, "YYYY-MM": the testing allowance's period. */
export function allowanceMonth(at: Date): string {
  return at.toISOString().slice(0, 7);
}

/** The refusals, in the order they are checked: the first that applies is the answer. */
export const sendRefusals = [
  "tenant_not_found",
  "tenant_not_activated",
  "channel_not_ready",
  "recipient_opted_out",
  "testing_allowance_exhausted",
] as const;
export type SendRefusal = (typeof sendRefusals)[number];

/** The stable code (code catalogue) each refusal answers with. */
export const sendRefusalCodes = {
  tenant_not_found: "tenant.not_found",
  tenant_not_activated: "account.tenant_not_activated",
  channel_not_ready: "partner.channel_not_ready",
  recipient_opted_out: "partner.recipient_opted_out",
  testing_allowance_exhausted: "account.testing_allowance_exhausted",
} as const satisfies Record<SendRefusal, string>;
export type SendRefusalCode = (typeof sendRefusalCodes)[SendRefusal];

export class TenantNotActivatedError extends DomainError {
  override name = "TenantNotActivatedError";
  constructor() {
    super("failed_precondition", sendRefusalCodes.tenant_not_activated, "the tenant has not been activated yet");
  }
}

export class ChannelNotReadyError extends DomainError {
  override name = "ChannelNotReadyError";
  constructor(message = "the tenant's messaging channel cannot send right now") {
    super("failed_precondition", sendRefusalCodes.channel_not_ready, message);
  }
}

export class RecipientOptedOutError extends DomainError {
  override name = "RecipientOptedOutError";
  constructor() {
    super(
      "failed_precondition",
      sendRefusalCodes.recipient_opted_out,
      "the recipient has opted out of messages from this tenant",
    );
  }
}

export class TestingAllowanceExhaustedError extends DomainError {
  override name = "TestingAllowanceExhaustedError";
  constructor(allowance: number) {
    super(
      "failed_precondition",
      sendRefusalCodes.testing_allowance_exhausted,
      `the testing plan's ${allowance} sends for this UTC month are used up; sign a commercial agreement to send more`,
    );
  }
}

/** The error a refusal is answered with. */
export function sendRefusalError(refusal: SendRefusal, allowance: number): DomainError {
  switch (refusal) {
    case "tenant_not_found":
      return new TenantNotFoundError();
    case "tenant_not_activated":
      return new TenantNotActivatedError();
    case "channel_not_ready":
      return new ChannelNotReadyError();
    case "recipient_opted_out":
      return new RecipientOptedOutError();
    case "testing_allowance_exhausted":
      return new TestingAllowanceExhaustedError(allowance);
  }
}

export function isSendRefusal(value: string): value is SendRefusal {
  return (sendRefusals as readonly string[]).includes(value);
}

/** What a send's preconditions are decided on, as record_send reads it at the moment of the send. */
export interface SendFacts {
  /** A live (unexpired) claim holds the request's Idempotency-Key. */
  keyHeld: boolean;
  /** The tenant, or undefined when there is none. */
  tenant: { activated: boolean; channelReady: boolean; plan: TenantPlan } | undefined;
  /** The recipient opted out of this tenant's messages. */
  recipientOptedOut: boolean;
  /** Sends counted against the testing allowance for the tenant this UTC month, before this one. */
  sendsThisMonth: number;
  /** The testing plan's sends per UTC month (TESTING_ALLOWANCE_PER_MONTH; always positive). */
  allowance: number;
}

export type SendDecision =
  /** The key is held: the answer comes from the key (notification-repeat.ts); nothing is checked. */
  | { kind: "repeat" }
  | { kind: "refused"; refusal: SendRefusal; code: SendRefusalCode }
  /** Send; `counted`: the send counts against the testing allowance (given back if the provider refuses). */
  | { kind: "allowed"; counted: boolean };

/** Whether a tenant's sends count against the testing allowance. */
export function countsAgainstAllowance(plan: TenantPlan): boolean {
  return plan === "testing";
}

/** The first precondition that fails, in record_send's order; undefined when every one holds. */
export function firstFailedPrecondition(facts: Omit<SendFacts, "keyHeld">): SendRefusal | undefined {
  const { tenant } = facts;
  if (!tenant) return "tenant_not_found";
  if (!tenant.activated) return "tenant_not_activated";
  if (!tenant.channelReady) return "channel_not_ready";
  if (facts.recipientOptedOut) return "recipient_opted_out";
  if (countsAgainstAllowance(tenant.plan) && facts.sendsThisMonth >= facts.allowance) {
    return "testing_allowance_exhausted";
  }
  return undefined;
}

/** Decides a send on its facts: a repeat, the winning refusal, or allowed (and whether it is counted). */
export function decideSend(facts: SendFacts): SendDecision {
  if (facts.keyHeld) return { kind: "repeat" };
  const refusal = firstFailedPrecondition(facts);
  if (refusal) return { kind: "refused", refusal, code: sendRefusalCodes[refusal] };
  return { kind: "allowed", counted: facts.tenant !== undefined && countsAgainstAllowance(facts.tenant.plan) };
}

/**
 * The one table of send-precondition cases. Two tests run it: send-preconditions.test.ts against
 * decideSend, and test/send-preconditions.test.ts against record_send on real Postgres (the
 * atomic enforcement). A case gives the facts and the outcome both must answer; change the rule
 * on one side only and one of the two tests fails.
 */
import {
  TESTING_ALLOWANCE_PER_MONTH,
  type SendDecision,
  type SendFacts,
  type SendRefusalCode,
} from "./send-preconditions.js";

/** A decision as one word: the refusal's code, or what happens to the send. */
export type SendOutcome = "repeat" | "allowed, counted" | "allowed, not counted" | SendRefusalCode;

export function outcomeOf(decision: SendDecision): SendOutcome {
  switch (decision.kind) {
    case "repeat":
      return "repeat";
    case "refused":
      return decision.code;
    case "allowed":
      return decision.counted ? "allowed, counted" : "allowed, not counted";
  }
}

export interface SendPreconditionCase {
  name: string;
  facts: SendFacts;
  expected: SendOutcome;
}

const ready = { activated: true, channelReady: true, plan: "testing" } as const;
const commercial = { ...ready, plan: "commercial" } as const;

/** Every precondition holds: an activated testing tenant, ready channel, no opt-out, nothing sent. */
function facts(overrides: Partial<SendFacts> = {}): SendFacts {
  return {
    keyHeld: false,
    tenant: ready,
    recipientOptedOut: false,
    sendsThisMonth: 0,
    allowance: TESTING_ALLOWANCE_PER_MONTH,
    ...overrides,
  };
}

const allowance = TESTING_ALLOWANCE_PER_MONTH;

export const sendPreconditionCases: readonly SendPreconditionCase[] = [
  // Each precondition on its own.
  { name: "every precondition holds (testing plan)", facts: facts(), expected: "allowed, counted" },
  {
    name: "every precondition holds (commercial plan)",
    facts: facts({ tenant: commercial }),
    expected: "allowed, not counted",
  },
  { name: "no such tenant", facts: facts({ tenant: undefined }), expected: "tenant.not_found" },
  {
    name: "tenant not activated",
    facts: facts({ tenant: { ...ready, activated: false } }),
    expected: "account.tenant_not_activated",
  },
  {
    name: "channel not ready",
    facts: facts({ tenant: { ...ready, channelReady: false } }),
    expected: "partner.channel_not_ready",
  },
  { name: "recipient opted out", facts: facts({ recipientOptedOut: true }), expected: "partner.recipient_opted_out" },

  // The testing allowance's boundary.
  { name: "testing: one send left", facts: facts({ sendsThisMonth: allowance - 1 }), expected: "allowed, counted" },
  {
    name: "testing: allowance used up",
    facts: facts({ sendsThisMonth: allowance }),
    expected: "account.testing_allowance_exhausted",
  },
  {
    name: "testing: more counted than the allowance",
    facts: facts({ sendsThisMonth: allowance + 1 }),
    expected: "account.testing_allowance_exhausted",
  },
  {
    name: "testing: a smaller allowance, one send left",
    facts: facts({ allowance: 3, sendsThisMonth: 2 }),
    expected: "allowed, counted",
  },
  {
    name: "testing: a smaller allowance, used up",
    facts: facts({ allowance: 3, sendsThisMonth: 3 }),
    expected: "account.testing_allowance_exhausted",
  },
  {
    name: "commercial: the allowance's worth of sends is never counted",
    facts: facts({ tenant: commercial, sendsThisMonth: allowance }),
    expected: "allowed, not counted",
  },
  {
    name: "commercial: far past the allowance",
    facts: facts({ tenant: commercial, sendsThisMonth: 5 * allowance }),
    expected: "allowed, not counted",
  },

  // Several failing at once: the first in record_send's order wins.
  {
    name: "not activated, channel not ready, opted out, allowance used up: not activated",
    facts: facts({
      tenant: { ...ready, activated: false, channelReady: false },
      recipientOptedOut: true,
      sendsThisMonth: allowance,
    }),
    expected: "account.tenant_not_activated",
  },
  {
    name: "channel not ready, opted out, allowance used up: channel not ready",
    facts: facts({ tenant: { ...ready, channelReady: false }, recipientOptedOut: true, sendsThisMonth: allowance }),
    expected: "partner.channel_not_ready",
  },
  {
    name: "opted out, allowance used up: opted out",
    facts: facts({ recipientOptedOut: true, sendsThisMonth: allowance }),
    expected: "partner.recipient_opted_out",
  },
  {
    name: "commercial, not activated, opted out: not activated",
    facts: facts({ tenant: { ...commercial, activated: false }, recipientOptedOut: true }),
    expected: "account.tenant_not_activated",
  },
  {
    name: "commercial, opted out: opted out",
    facts: facts({ tenant: commercial, recipientOptedOut: true, sendsThisMonth: allowance }),
    expected: "partner.recipient_opted_out",
  },

  // A held key is answered as a repeat before any precondition.
  { name: "key held, every precondition holds", facts: facts({ keyHeld: true }), expected: "repeat" },
  { name: "key held, no such tenant", facts: facts({ keyHeld: true, tenant: undefined }), expected: "repeat" },
  {
    name: "key held, not activated, opted out, allowance used up",
    facts: facts({
      keyHeld: true,
      tenant: { ...ready, activated: false },
      recipientOptedOut: true,
      sendsThisMonth: allowance,
    }),
    expected: "repeat",
  },
];

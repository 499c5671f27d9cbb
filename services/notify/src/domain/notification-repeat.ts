/**
 * What a repeat of an already claimed Idempotency-Key gets, from what the key remembers. A repeat
 * never calls the provider: it replays a recorded `sent`, answers unknown for anything else the
 * key recorded, waits for a first attempt that still holds its lease, and settles as unknown a
 * first attempt that died between recording the command and recording the provider's answer.
 */
export interface RememberedClaim<R> {
  fingerprint: string;
  state: "in_progress" | "completed";
  /** The recorded answer of a completed claim. */
  result: (R & { state: "sent" | "unknown" }) | null;
  /** The first attempt's lease ran out (it may have died). */
  leaseExpired: boolean;
}

export type RepeatDecision<R> =
  /** The key was released meanwhile (the first attempt was refused, or the key expired): claim it afresh. */
  | { kind: "claim_afresh" }
  /** The same key came with another request. */
  | { kind: "key_reused" }
  | { kind: "replay"; result: R }
  | { kind: "outcome_unknown" }
  | { kind: "in_progress" }
  /** Mark the abandoned send unknown (if nobody else did meanwhile), then answer unknown. */
  | { kind: "settle_abandoned" };

export function decideRepeat<R>(claim: RememberedClaim<R> | undefined, fingerprint: string): RepeatDecision<R> {
  if (!claim) return { kind: "claim_afresh" };
  if (claim.fingerprint !== fingerprint) return { kind: "key_reused" };
  if (claim.state === "completed") {
    return claim.result?.state === "sent" ? { kind: "replay", result: claim.result } : { kind: "outcome_unknown" };
  }
  return claim.leaseExpired ? { kind: "settle_abandoned" } : { kind: "in_progress" };
}

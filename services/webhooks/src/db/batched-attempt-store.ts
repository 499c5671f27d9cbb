/**
 * The attempt store the delivery worker runs on in production (main.ts): the single-statement
 * store of attempt-store.ts wrapped twice, outermost first:
 *
 *   withBatchedClaims (claim-batcher.ts)       claim: the claims made in one turn of the event
 *                                              loop in one statement; a job it did not claim goes
 *                                              to the inner claim, which tells stale from leased
 *   withBatchedAttempts (attempt-batcher.ts)   recordAttempt: the attempts that finish together
 *                                              in one transaction (group commit)
 *   createAttemptStore (attempt-store.ts)      the rest, one statement or transaction a call:
 *                                              release, holdClaimed, abandonClaimed, and the claim
 *                                              of a job the batch did not take (its own
 *                                              recordAttempt is never reached here)
 *
 * Every caller's answer still comes after its own write committed, so the worker acks a job only
 * once its attempt is durable.
 */
import type { Knex } from "@platform/service-kit/postgres";
import { withBatchedAttempts } from "./attempt-batcher.js";
import { createAttemptStore, type AttemptStore } from "./attempt-store.js";
import { withBatchedClaims } from "./claim-batcher.js";
import type { EndpointEvents } from "./endpoint-events.js";

/** `events`: where `webhook.endpoint_dead_lettered` goes when a dead letter pauses an endpoint. */
export function createBatchedAttemptStore(db: Knex, events?: EndpointEvents): AttemptStore {
  return withBatchedClaims(withBatchedAttempts(createAttemptStore(db, events), db, { events }), db);
}

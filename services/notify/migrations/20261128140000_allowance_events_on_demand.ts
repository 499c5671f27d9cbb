import type { Knex } from "@platform/service-kit/postgres";
import { recordSendV4 } from "./20261128130000_pace_without_row_lock.js";

export const name = "20261128140000_allowance_events_on_demand";

function withEventOnDemand(text: string, threshold: "warn" | "full"): string {
  const from = `          if found then
            insert into outbox (event_id, subject, payload, traceparent)
            values (p_${threshold}_id,`;
  if (!text.includes(from)) throw new Error(`${name}: record_send's ${threshold} announcement was not found`);
  return text.replace(
    from,
    `          if found then
            -- The event's id came without its payload: ask for it (the statement rolls back,
            -- nothing of this send is kept, no slot of the pace is taken; the caller sends again).
            if length(p_${threshold}_payload) = 0 then
              raise exception using errcode = 'PN428', message = 'allowance event needed';
            end if;
            insert into outbox (event_id, subject, payload, traceparent)
            values (p_${threshold}_id,`,
  );
}

/**
 * record_send (the same 26 arguments, the same answers) with the testing allowance's 80% and 100%
 * events on demand. A send used to build both events (ids, envelopes, protobuf) and pass their
 * payloads on every call, though only the one send of a tenant and month that reaches a threshold
 * writes one, and only on the testing plan. notify now passes each event's id with an empty
 * payload; the send that reaches the threshold raises PN428 (domain/testing-allowance.ts
 * ALLOWANCE_EVENT_NEEDED_SQLSTATE) before anything is kept, and notify
 * sends again with the payload (twice a month per testing tenant). A caller that passes the
 * payload (the previous release) or no id (no events) is answered as before.
 */
export const recordSendV5 = withEventOnDemand(withEventOnDemand(recordSendV4, "warn"), "full");

/** Replaces record_send in place (the same signature): the previous release calls it unchanged. */
export async function up(db: Knex): Promise<void> {
  await db.raw(recordSendV5);
}

export async function down(db: Knex): Promise<void> {
  await db.raw(recordSendV4);
}

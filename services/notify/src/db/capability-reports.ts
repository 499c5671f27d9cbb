import type { Knex } from "@platform/service-kit/postgres";
import { snapshotOf, type ActivationRepository } from "./activation-repository.js";
import { appendEvents, type EventOutbox } from "./event-outbox.js";
import { reportCapabilityCheck, type ActivationEvent, type CapabilityReport } from "../domain/activation.js";

/** Appends the events of one change, in order, in the change's transaction; returns how many. */
export function appendActivationEvents(
  trx: Knex.Transaction,
  events: EventOutbox,
  tenantId: string,
  list: readonly ActivationEvent[],
  now: Date,
  traceparent?: string,
): Promise<number> {
  return appendEvents(
    trx,
    events,
    list.map((event) => ({ type: event.type, tenantId, occurredAt: now, object: event.object, traceparent })),
  );
}

/**
 * A capability check's result applied to the tenant in `trx` (under its row lock): the capability's
 * record, the tenant's activation state, channel readiness and lastErrorCode as the state machine
 * decides (domain/activation.ts), and nothing more. The caller appends `result.events`.
 */
export async function saveCapabilityReport(
  trx: Knex.Transaction,
  activation: ActivationRepository,
  required: readonly string[],
  tenantId: string,
  report: CapabilityReport,
  at: Date,
) {
  const before = await activation.lock(trx, tenantId);
  const result = reportCapabilityCheck(snapshotOf(before, required), report, at);
  await activation.saveCapability(trx, tenantId, result.capability);
  if (result.changed) await activation.saveTenant(trx, before, result, at, result.channelReady);
  return result;
}

/**
 * The messaging channel's (or any capability's) check result reported by notify itself (the number
 * check, the provider's callbacks), through the same machinery as ReportCapabilityCheck: saved and
 * its events (capability.suspended / capability.restored, tenant.*) appended in `trx`. Returns the
 * events' count (the caller kicks the relay after its commit when > 0). A repeat of the same
 * result changes nothing and emits nothing.
 */
export async function applyCapabilityReport(
  trx: Knex.Transaction,
  deps: { activation: ActivationRepository; events: EventOutbox; requiredCapabilities: readonly string[] },
  tenantId: string,
  report: CapabilityReport,
  at = new Date(),
): Promise<{ events: number; changed: boolean }> {
  const result = await saveCapabilityReport(trx, deps.activation, deps.requiredCapabilities, tenantId, report, at);
  const events = result.changed ? await appendActivationEvents(trx, deps.events, tenantId, result.events, at) : 0;
  return { events, changed: result.changed };
}

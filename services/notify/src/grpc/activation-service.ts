import {
  ActivationServiceService,
  StartActivationRequest,
  type ActivationManifest,
  type Capability,
} from "@platform/proto/notify/v1/activation";
import type { UnaryHandlers } from "@platform/service-kit/grpc-server";
import { fingerprintOf, runIdempotently, type IdempotencyOptions } from "@platform/service-kit/idempotency";
import type { Knex } from "@platform/service-kit/postgres";
import { snapshotOf, type ActivationRepository, type StoredActivation } from "../db/activation-repository.js";
import {
  blockingReasonsOf,
  reportCapabilityCheck,
  startActivation,
  validateCapabilityReport,
  type ActivationEvent,
  type ActivationState,
} from "../domain/activation.js";
import { isTenantId, TenantNotFoundError } from "../domain/tenant.js";
import type { EventOutbox } from "../db/event-outbox.js";

const iso = (date: Date | null) => (date ? date.toISOString() : "");

type StepState = "pending" | "in_progress" | "done" | "failed";

/** The manifest: the three steps with their states, the blocking reasons, the required checks. */
export function manifestOf(stored: StoredActivation, required: readonly string[]): ActivationManifest {
  const state: ActivationState = stored.state;
  const validation: Record<ActivationState, [StepState, Date | null]> = {
    provisioning: ["pending", null],
    validation: ["in_progress", stored.validationStartedAt],
    stalled: ["failed", stored.stalledAt],
    live: ["done", stored.activatedAt],
  };
  const steps = [
    {
      name: "provisioning",
      state: state === "provisioning" ? "in_progress" : "done",
      updatedAt: iso(state === "provisioning" ? stored.createdAt : (stored.validationStartedAt ?? stored.activatedAt)),
    },
    { name: "validation", state: validation[state][0], updatedAt: iso(validation[state][1]) },
    {
      name: "live",
      state: state === "live" ? "done" : "pending",
      updatedAt: iso(state === "live" ? stored.activatedAt : null),
    },
  ];
  return {
    tenantId: stored.tenantId,
    state,
    steps,
    blockingReasons: blockingReasonsOf(
      state,
      stored.capabilities,
      required,
      stored.validationStartedAt ?? stored.updatedAt,
    ).map((reason) => ({ code: reason.code, capability: reason.capability, since: reason.since.toISOString() })),
    requiredCapabilities: [...required],
    version: String(stored.version),
    updatedAt: stored.updatedAt.toISOString(),
  };
}

export function capabilitiesOf(stored: StoredActivation, required: readonly string[]): Capability[] {
  const checked = new Map(stored.capabilities.map((c) => [c.name, c]));
  const names = [...new Set([...required, ...checked.keys()])].sort();
  return names.map((name) => {
    const c = checked.get(name);
    return {
      name,
      state: c?.state ?? "unchecked",
      required: required.includes(name),
      lastResult: c?.lastResult ?? "",
      lastCheckedAt: iso(c?.lastCheckedAt ?? null),
      reasonCode: c?.reasonCode ?? "",
      changedAt: iso(c?.changedAt ?? null),
    };
  });
}

function requireTenantId(id: string): string {
  if (!isTenantId(id)) throw new TenantNotFoundError();
  return id;
}

export interface ActivationServiceDeps {
  db: Knex;
  activation: ActivationRepository;
  events: EventOutbox;
  idempotency: IdempotencyOptions;
  /** NOTIFY_REQUIRED_CAPABILITIES. */
  requiredCapabilities: readonly string[];
  now?: () => Date;
}

/** Appends the events of one change, in order, in the change's transaction. */
export async function appendActivationEvents(
  trx: Knex.Transaction,
  events: EventOutbox,
  tenantId: string,
  list: readonly ActivationEvent[],
  now: Date,
  traceparent?: string,
): Promise<void> {
  for (const event of list) {
    await events.append(trx, { type: event.type, tenantId, occurredAt: now, object: event.object, traceparent });
  }
}

/** notify.v1.ActivationService: activation, its manifest, capability checks and their report. */
export function createActivationService(deps: ActivationServiceDeps): UnaryHandlers<typeof ActivationServiceService> {
  const required = deps.requiredCapabilities;
  const now = deps.now ?? (() => new Date());
  return {
    async startActivation(request, { logger, traceparent }) {
      const tenantId = requireTenantId(request.tenantId);
      const fingerprint = fingerprintOf(
        "notify.v1.ActivationService/StartActivation",
        StartActivationRequest.encode({ ...request, idempotencyKey: "" }).finish(),
      );
      let emitted = 0;
      const outcome = await runIdempotently(
        deps.db,
        { scope: tenantId, key: request.idempotencyKey, fingerprint },
        async (trx) => {
          const at = now();
          const before = await deps.activation.lock(trx, tenantId);
          const result = startActivation(snapshotOf(before, required), at);
          if (result.changed) {
            await deps.activation.saveTenant(trx, before, result, at);
            await appendActivationEvents(trx, deps.events, tenantId, result.events, at, traceparent);
            emitted = result.events.length;
          }
          // The answer is the manifest as this execution left it (kept for replays).
          return manifestOf(await deps.activation.lock(trx, tenantId), required);
        },
        deps.idempotency,
      );
      if (emitted > 0) deps.events.kick();
      if (!outcome.replayed) logger.info({ tenantId, state: outcome.result.state }, "activation started");
      return { manifest: outcome.result, replayed: outcome.replayed };
    },
    async getActivation(request) {
      const stored = await deps.activation.get(requireTenantId(request.tenantId));
      return { manifest: manifestOf(stored, required) };
    },
    async reportCapabilityCheck(request, { logger, traceparent }) {
      const tenantId = requireTenantId(request.tenantId);
      const report = validateCapabilityReport({
        capability: request.capability,
        passed: request.passed,
        reasonCode: request.reasonCode,
      });
      const { stored, capability, events } = await deps.db.transaction(async (trx) => {
        const at = now();
        const before = await deps.activation.lock(trx, tenantId);
        const result = reportCapabilityCheck(snapshotOf(before, required), report, at);
        await deps.activation.saveCapability(trx, tenantId, result.capability);
        if (result.changed) {
          await deps.activation.saveTenant(trx, before, result, at, result.channelReady);
          await appendActivationEvents(trx, deps.events, tenantId, result.events, at, traceparent);
        }
        return {
          stored: await deps.activation.lock(trx, tenantId),
          capability: result.capability,
          events: result.events,
        };
      });
      if (events.length > 0) deps.events.kick();
      logger.info(
        { tenantId, capability: capability.name, result: capability.lastResult, events: events.map((e) => e.type) },
        "capability check reported",
      );
      return {
        capability: capabilitiesOf(stored, required).find((c) => c.name === capability.name),
        manifest: manifestOf(stored, required),
        emittedEventTypes: events.map((e) => e.type),
      };
    },
    async getCapabilities(request) {
      const stored = await deps.activation.get(requireTenantId(request.tenantId));
      return { capabilities: capabilitiesOf(stored, required) };
    },
  };
}

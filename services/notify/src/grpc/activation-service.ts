import {
  ActivationServiceService,
  type ActivationManifest,
  type Capability,
} from "@platform/proto/notify/v1/activation";
import type { UnaryHandlers } from "@platform/service-kit/grpc-server";
import type { IdempotencyOptions } from "@platform/service-kit/idempotency";
import type { Knex } from "@platform/service-kit/postgres";
import { snapshotOf, type ActivationRepository, type StoredActivation } from "../db/activation-repository.js";
import {
  blockingReasonsOf,
  startActivation,
  validateCapabilityReport,
  type ActivationState,
} from "../domain/activation.js";
import { requireTenantId } from "../domain/tenant.js";
import type { EventOutbox } from "../db/event-outbox.js";
import { appendActivationEvents, applyCapabilityReport, saveCapabilityReport } from "../db/capability-reports.js";
import { notifyMutations } from "./notify-mutations.js";

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

export interface ActivationServiceDeps {
  db: Knex;
  activation: ActivationRepository;
  events: EventOutbox;
  idempotency: IdempotencyOptions;
  /** NOTIFY_REQUIRED_CAPABILITIES. */
  requiredCapabilities: readonly string[];
  now?: () => Date;
}

export { appendActivationEvents, applyCapabilityReport, saveCapabilityReport };

/** notify.v1.ActivationService: activation, its manifest, capability checks and their report. */
export function createActivationService(deps: ActivationServiceDeps): UnaryHandlers<typeof ActivationServiceService> {
  const required = deps.requiredCapabilities;
  const now = deps.now ?? (() => new Date());
  const declare = notifyMutations(deps);
  return {
    startActivation: declare(ActivationServiceService.startActivation, {
      async effect(trx, { tenantId }) {
        const at = now();
        const before = await deps.activation.lock(trx, tenantId);
        const result = startActivation(snapshotOf(before, required), at);
        if (result.changed) await deps.activation.saveTenant(trx, before, result, at);
        // The answer is the manifest as this execution left it (kept for replays).
        const manifest = manifestOf(await deps.activation.lock(trx, tenantId), required);
        return { manifest, events: result.changed ? result.events : [], at };
      },
      record: (trx, { events, at }, { tenantId, call }) =>
        appendActivationEvents(trx, deps.events, tenantId, events, at, call.traceparent),
      keep: ({ manifest }) => manifest,
      log: ({ manifest }, { tenantId }) => [{ tenantId, state: manifest.state }, "activation started"],
      answer: (manifest, replayed) => ({ manifest, replayed }),
    }),
    async getActivation(request) {
      const stored = await deps.activation.get(requireTenantId(request.tenantId));
      return { manifest: manifestOf(stored, required) };
    },
    reportCapabilityCheck: declare(ActivationServiceService.reportCapabilityCheck, {
      once: false,
      prepare: (request) =>
        validateCapabilityReport({
          capability: request.capability,
          passed: request.passed,
          reasonCode: request.reasonCode,
        }),
      async effect(trx, { tenantId, prepared: report }) {
        const at = now();
        const result = await saveCapabilityReport(trx, deps.activation, required, tenantId, report, at);
        return { result, at, stored: await deps.activation.lock(trx, tenantId) };
      },
      record: (trx, { result, at }, { tenantId, call }) =>
        result.changed
          ? appendActivationEvents(trx, deps.events, tenantId, result.events, at, call.traceparent)
          : Promise.resolve(0),
      log: ({ result: { capability, events } }, { tenantId }) => [
        { tenantId, capability: capability.name, result: capability.lastResult, events: events.map((e) => e.type) },
        "capability check reported",
      ],
      answer: ({ stored, result: { capability, events } }) => ({
        capability: capabilitiesOf(stored, required).find((c) => c.name === capability.name),
        manifest: manifestOf(stored, required),
        emittedEventTypes: events.map((e) => e.type),
      }),
    }),
    async getCapabilities(request) {
      const stored = await deps.activation.get(requireTenantId(request.tenantId));
      return { capabilities: capabilitiesOf(stored, required) };
    },
  };
}

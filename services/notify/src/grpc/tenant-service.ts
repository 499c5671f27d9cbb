import {
  ChannelState,
  TenantPlan as ProtoPlan,
  TenantServiceService,
  type Tenant as ProtoTenant,
  type TestingAllowance as ProtoTestingAllowance,
  type UsageLimits as ProtoUsageLimits,
} from "@platform/proto/notify/v1";
import type { IdempotencyOptions } from "@platform/service-kit/idempotency";
import type { UnaryHandlers } from "@platform/service-kit/grpc-server";
import type { Knex } from "@platform/service-kit/postgres";
import type { PlanChangeRecord, TenantRepository } from "../db/tenant-repository.js";
import { appendEvents, type EventOutbox, type NotifyEvent } from "../db/event-outbox.js";
import { createActivationRepository, snapshotOf } from "../db/activation-repository.js";
import { forceLive } from "../domain/activation.js";
import { appendActivationEvents } from "./activation-service.js";
import { notifyMutations } from "./notify-mutations.js";
import {
  InvalidTenantError,
  requireTenantId,
  validateNewTenant,
  withChannel,
  type Tenant,
  type TenantPlan,
} from "../domain/tenant.js";
import { maskRecipient, parseRecipient } from "../domain/notification.js";
import { validateExpectedVersion, validateUsageLimits, type UsageLimits } from "../domain/usage-limits.js";
import { usageMonthOf } from "../domain/usage-month.js";
import type { UsageStore } from "../db/usage-store.js";
import {
  allowanceThresholdEventId,
  allowanceThresholdObject,
  allowanceView,
  decidePlanChange,
  DEFAULT_TESTING_ALLOWANCE,
  planChangedObject,
  TENANT_PLAN_CHANGED,
  TESTING_ALLOWANCE_THRESHOLD_CROSSED,
  thresholdsStoodAt,
  validatePlanChange,
  type AllowanceThreshold,
  type AllowanceView,
  type PlanChange,
} from "../domain/testing-allowance.js";

const planToProto: Record<TenantPlan, ProtoPlan> = {
  testing: ProtoPlan.TENANT_PLAN_TESTING,
  commercial: ProtoPlan.TENANT_PLAN_COMMERCIAL,
};

function planFromProto(plan: ProtoPlan): TenantPlan | undefined {
  if (plan === ProtoPlan.TENANT_PLAN_UNSPECIFIED) return undefined;
  if (plan === ProtoPlan.TENANT_PLAN_TESTING) return "testing";
  if (plan === ProtoPlan.TENANT_PLAN_COMMERCIAL) return "commercial";
  throw new InvalidTenantError("plan must be testing or commercial");
}

export function toProtoAllowance(view: AllowanceView): ProtoTestingAllowance {
  return {
    limit: String(view.limit),
    used: String(view.used),
    remaining: String(view.remaining),
    month: view.month,
    resetsAt: view.resetsAt.toISOString(),
  };
}

function toProtoTenant(tenant: Tenant, testingAllowance: number): ProtoTenant {
  return {
    id: tenant.id,
    name: tenant.name,
    status: tenant.status,
    activated: tenant.activated,
    channelReady: tenant.channelReady,
    version: String(tenant.version),
    lastErrorCode: tenant.lastErrorCode ?? undefined,
    plan: planToProto[tenant.plan],
    createdAt: tenant.createdAt.toISOString(),
    activationState: tenant.activationState,
    testingAllowance:
      tenant.plan === "testing"
        ? toProtoAllowance(allowanceView(testingAllowance, tenant.month, tenant.monthSends))
        : undefined,
    planReason: tenant.planReason ?? undefined,
    planChangedAt: tenant.planChangedAt?.toISOString(),
  };
}

/** The JSON kept with an idempotency key is this plain record, so a replay is exact. */
interface StoredUsageLimits {
  tenantId: string;
  softCap: number;
  hardCap: number;
  version: number;
  updatedAt: string;
}

function toStoredLimits(limits: UsageLimits): StoredUsageLimits {
  return { ...limits, updatedAt: limits.updatedAt.toISOString() };
}

function toProtoLimits(limits: StoredUsageLimits): ProtoUsageLimits {
  return {
    tenantId: limits.tenantId,
    softCap: String(limits.softCap),
    hardCap: String(limits.hardCap),
    version: String(limits.version),
    updatedAt: limits.updatedAt,
  };
}

/** notify.v1.TenantService: tenants and their usage limits. */
export function createTenantService(deps: {
  db: Knex;
  tenants: TenantRepository;
  idempotency: IdempotencyOptions;
  /** Where the service's events go (in the transaction of their change). */
  events: EventOutbox;
  /** The usage months: new limits below this month's usage cross the caps not crossed yet. */
  usage?: UsageStore;
  /** Which UTC month "this month" is (defaults to the system clock). */
  clock?: () => Date;
  /** The testing plan's sends per UTC month (NOTIFY_TESTING_ALLOWANCE; default 1000). */
  testingAllowance?: number;
}): UnaryHandlers<typeof TenantServiceService> {
  const allowance = deps.testingAllowance ?? DEFAULT_TESTING_ALLOWANCE;
  const activation = createActivationRepository(deps.db);
  const declare = notifyMutations(deps);

  /**
   * Back on testing: the allowance thresholds the recounted month already stands past, each marked
   * reached the first time (in `trx`); those it marks now are announced with the change.
   */
  async function thresholdsReached(trx: Knex.Transaction, tenantId: string, tenant: Tenant) {
    const reached: AllowanceThreshold[] = [];
    for (const threshold of thresholdsStoodAt(allowance, tenant.plan, tenant.monthSends)) {
      if (await deps.tenants.markThreshold(trx, tenantId, tenant.month, threshold)) reached.push(threshold);
    }
    return reached;
  }

  /** tenant.plan_changed, then the allowance thresholds it made reached, in order. */
  function planChangeEvents(
    tenantId: string,
    { tenant, previous }: PlanChangeRecord,
    change: PlanChange,
    reached: readonly AllowanceThreshold[],
    traceparent: string | undefined,
  ): NotifyEvent[] {
    const at = tenant.planChangedAt ?? new Date();
    const planChanged: NotifyEvent = {
      type: TENANT_PLAN_CHANGED,
      tenantId,
      occurredAt: at,
      object: planChangedObject({
        tenantId,
        plan: tenant.plan,
        previousPlan: previous.plan,
        reason: change.reason,
        version: tenant.version,
        changedAt: at,
        actor: change.actor,
        month: tenant.month,
      }),
      traceparent,
    };
    return [
      planChanged,
      ...reached.map((threshold) => ({
        id: allowanceThresholdEventId(tenantId, tenant.month, threshold),
        type: TESTING_ALLOWANCE_THRESHOLD_CROSSED,
        tenantId,
        occurredAt: at,
        object: allowanceThresholdObject(tenantId, tenant.month, threshold, allowance),
        traceparent,
      })),
    ];
  }

  return {
    createTenant: declare(TenantServiceService.createTenant, {
      tenant: false,
      once: false,
      prepare: (request) =>
        validateNewTenant({ id: request.id, name: request.name, plan: planFromProto(request.plan) }),
      effect: (trx, { prepared }) => deps.tenants.create(trx, prepared),
      log: (tenant) => [{ tenantId: tenant.id }, "tenant created"],
      answer: (tenant) => ({ tenant: toProtoTenant(tenant, allowance) }),
    }),
    async getTenant(request) {
      return { tenant: toProtoTenant(await deps.tenants.get(requireTenantId(request.tenantId)), allowance) };
    },
    // The operator's override: live now, channel ready, tenant.activated unless it already was.
    activateTenant: declare(TenantServiceService.activateTenant, {
      once: false,
      async effect(trx, { tenantId }) {
        const at = new Date();
        const before = await activation.lock(trx, tenantId);
        const outcome = forceLive(snapshotOf(before, []), at);
        await activation.saveTenant(trx, before, { ...outcome, changed: true }, at, true);
        return { events: outcome.events, at };
      },
      record: (trx, { events, at }, { tenantId, call }) =>
        appendActivationEvents(trx, deps.events, tenantId, events, at, call.traceparent),
      log: (_, { tenantId }) => [{ tenantId }, "tenant activated"],
      // The tenant as read after the commit.
      answer: async (_, __, { tenantId }) => ({
        tenant: toProtoTenant(await deps.tenants.get(tenantId), allowance),
      }),
    }),
    setChannelState: declare(TenantServiceService.setChannelState, {
      once: false,
      // A bad state is refused before the tenant is looked at.
      validate(request) {
        if (request.state === ChannelState.CHANNEL_STATE_UNSPECIFIED || !(request.state in ChannelState)) {
          throw new InvalidTenantError("state must be ready or not_ready");
        }
      },
      effect: (trx, { request, tenantId }) =>
        deps.tenants.update(trx, tenantId, (t) => withChannel(t, request.state === ChannelState.CHANNEL_STATE_READY)),
      answer: (tenant) => ({ tenant: toProtoTenant(tenant, allowance) }),
    }),
    setUsageLimits: declare(TenantServiceService.setUsageLimits, {
      prepare(request) {
        const { softCap, hardCap } = validateUsageLimits(Number(request.softCap), Number(request.hardCap));
        const expectedVersion = validateExpectedVersion(
          request.expectedVersion === undefined ? undefined : Number(request.expectedVersion),
        );
        return { softCap, hardCap, expectedVersion };
      },
      async effect(trx, { tenantId, prepared: { softCap, hardCap, expectedVersion }, call }) {
        const limits = await deps.tenants.setUsageLimits(trx, tenantId, softCap, hardCap, expectedVersion);
        if (!deps.usage) return { limits, crossed: [] };
        const at = (deps.clock ?? (() => new Date()))();
        const month = usageMonthOf(at);
        const crossed = await deps.usage.crossAfterLimitsChange(trx, tenantId, month, limits, at, call.traceparent);
        return { limits, crossed };
      },
      record: (trx, { crossed }) => appendEvents(trx, deps.events, crossed),
      keep: ({ limits }) => toStoredLimits(limits),
      answer: (limits, replayed) => ({ limits: toProtoLimits(limits), replayed }),
    }),
    changePlan: declare(TenantServiceService.changePlan, {
      once: false,
      prepare: (request) =>
        validatePlanChange({
          plan: request.plan === ProtoPlan.TENANT_PLAN_UNSPECIFIED ? undefined : planFromProto(request.plan),
          reason: request.reason,
          expectedVersion: request.expectedVersion === undefined ? undefined : Number(request.expectedVersion),
          actor: request.actor,
        }),
      async effect(trx, { tenantId, prepared: change }) {
        const outcome = await deps.tenants.changePlan(trx, tenantId, (tenant) => {
          const decision = decidePlanChange(tenant, change);
          return decision.kind === "unchanged"
            ? undefined
            : { plan: change.plan, reason: change.reason, recount: decision.recount };
        });
        return { outcome, reached: outcome.changed ? await thresholdsReached(trx, tenantId, outcome.tenant) : [] };
      },
      record: (trx, { outcome, reached }, { tenantId, prepared: change, call }) =>
        outcome.changed
          ? appendEvents(trx, deps.events, planChangeEvents(tenantId, outcome, change, reached, call.traceparent))
          : Promise.resolve(0),
      log: ({ outcome }, { tenantId, prepared: change }) => [
        { tenantId, plan: outcome.tenant.plan, reason: change.reason, changed: outcome.changed },
        outcome.changed ? "tenant plan changed" : "tenant plan unchanged (already on it)",
      ],
      answer: ({ outcome }) => ({ tenant: toProtoTenant(outcome.tenant, allowance), changed: outcome.changed }),
    }),
    async getUsageLimits(request) {
      const limits = await deps.tenants.getUsageLimits(requireTenantId(request.tenantId));
      return { limits: limits === undefined ? undefined : toProtoLimits(toStoredLimits(limits)) };
    },
    setRecipientConsent: declare(TenantServiceService.setRecipientConsent, {
      once: false,
      prepare: (request) => parseRecipient(request.to),
      effect: (trx, { tenantId, prepared: recipient, request }) =>
        deps.tenants.setOptOut(trx, tenantId, recipient, request.optedOut),
      log: (_, { tenantId, prepared: recipient, request }) => [
        { tenantId, to: maskRecipient(recipient), optedOut: request.optedOut },
        "recipient consent changed",
      ],
      answer: (_, __, { tenantId, prepared: recipient, request }) => ({
        tenantId,
        recipient,
        optedOut: request.optedOut,
      }),
    }),
  };
}

import {
  ChannelState,
  SetUsageLimitsRequest,
  TenantPlan as ProtoPlan,
  TenantServiceService,
  type Tenant as ProtoTenant,
  type TestingAllowance as ProtoTestingAllowance,
  type UsageLimits as ProtoUsageLimits,
} from "@platform/proto/notify/v1";
import { fingerprintOf, runIdempotently, type IdempotencyOptions } from "@platform/service-kit/idempotency";
import type { UnaryHandlers } from "@platform/service-kit/grpc-server";
import type { Knex } from "@platform/service-kit/postgres";
import type { TenantRepository } from "../db/tenant-repository.js";
import type { EventOutbox } from "../db/event-outbox.js";
import { createActivationRepository, snapshotOf } from "../db/activation-repository.js";
import { forceLive } from "../domain/activation.js";
import { appendActivationEvents } from "./activation-service.js";
import {
  InvalidTenantError,
  isTenantId,
  TenantNotFoundError,
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
  allowanceThresholds,
  allowanceView,
  decidePlanChange,
  DEFAULT_TESTING_ALLOWANCE,
  planChangedObject,
  TENANT_PLAN_CHANGED,
  TESTING_ALLOWANCE_THRESHOLD_CROSSED,
  thresholdSends,
  validatePlanChange,
  type AllowanceView,
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

/** An unknown or malformed id is simply "not found": the partner learns nothing more. */
function requireTenantId(id: string): string {
  if (!isTenantId(id)) throw new TenantNotFoundError();
  return id;
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
  return {
    async createTenant(request, { logger }) {
      const tenant = await deps.tenants.create(
        validateNewTenant({ id: request.id, name: request.name, plan: planFromProto(request.plan) }),
      );
      logger.info({ tenantId: tenant.id }, "tenant created");
      return { tenant: toProtoTenant(tenant, allowance) };
    },
    async getTenant(request) {
      return { tenant: toProtoTenant(await deps.tenants.get(requireTenantId(request.tenantId)), allowance) };
    },
    async activateTenant(request, { logger, traceparent }) {
      // The operator's override: live now, channel ready, tenant.activated unless it already was.
      const tenantId = requireTenantId(request.tenantId);
      const emitted = await deps.db.transaction(async (trx) => {
        const at = new Date();
        const before = await activation.lock(trx, tenantId);
        const outcome = forceLive(snapshotOf(before, []), at);
        await activation.saveTenant(trx, before, { ...outcome, changed: true }, at, true);
        await appendActivationEvents(trx, deps.events, tenantId, outcome.events, at, traceparent);
        return outcome.events.length;
      });
      if (emitted > 0) deps.events.kick();
      const tenant = await deps.tenants.get(tenantId);
      logger.info({ tenantId: tenant.id }, "tenant activated");
      return { tenant: toProtoTenant(tenant, allowance) };
    },
    async setChannelState(request) {
      if (request.state === ChannelState.CHANNEL_STATE_UNSPECIFIED || !(request.state in ChannelState)) {
        throw new InvalidTenantError("state must be ready or not_ready");
      }
      const ready = request.state === ChannelState.CHANNEL_STATE_READY;
      const tenant = await deps.tenants.update(requireTenantId(request.tenantId), (t) => withChannel(t, ready));
      return { tenant: toProtoTenant(tenant, allowance) };
    },
    async setUsageLimits(request, { traceparent }) {
      let announced = 0;
      const tenantId = requireTenantId(request.tenantId);
      const { softCap, hardCap } = validateUsageLimits(Number(request.softCap), Number(request.hardCap));
      const expectedVersion = validateExpectedVersion(
        request.expectedVersion === undefined ? undefined : Number(request.expectedVersion),
      );
      const fingerprint = fingerprintOf(
        "notify.v1.TenantService/SetUsageLimits",
        SetUsageLimitsRequest.encode({ ...request, idempotencyKey: "" }).finish(),
      );
      const outcome = await runIdempotently(
        deps.db,
        { scope: tenantId, key: request.idempotencyKey, fingerprint },
        async (trx) => {
          const limits = await deps.tenants.setUsageLimits(trx, tenantId, softCap, hardCap, expectedVersion);
          if (deps.usage) {
            const at = (deps.clock ?? (() => new Date()))();
            announced = await deps.usage.crossAfterLimitsChange(
              trx,
              tenantId,
              usageMonthOf(at),
              limits,
              at,
              traceparent,
            );
          }
          return toStoredLimits(limits);
        },
        deps.idempotency,
      );
      if (announced > 0) deps.events.kick();
      return { limits: toProtoLimits(outcome.result), replayed: outcome.replayed };
    },
    async changePlan(request, { logger, traceparent }) {
      const tenantId = requireTenantId(request.tenantId);
      const change = validatePlanChange({
        plan: request.plan === ProtoPlan.TENANT_PLAN_UNSPECIFIED ? undefined : planFromProto(request.plan),
        reason: request.reason,
        expectedVersion: request.expectedVersion === undefined ? undefined : Number(request.expectedVersion),
        actor: request.actor,
      });
      let announced = 0;
      const outcome = await deps.tenants.changePlan(
        tenantId,
        (tenant) => {
          const decision = decidePlanChange(tenant, change);
          return decision.kind === "unchanged"
            ? undefined
            : { plan: change.plan, reason: change.reason, recount: decision.recount };
        },
        async (trx, { tenant, previous }) => {
          const at = tenant.planChangedAt ?? new Date();
          await deps.events.append(trx, {
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
          });
          announced++;
          if (tenant.plan !== "testing") return;
          // Back on testing: the recounted month may already stand past a threshold.
          for (const threshold of allowanceThresholds) {
            if (tenant.monthSends < thresholdSends(allowance, threshold)) continue;
            if (!(await deps.tenants.markThreshold(trx, tenantId, tenant.month, threshold))) continue;
            await deps.events.append(trx, {
              id: allowanceThresholdEventId(tenantId, tenant.month, threshold),
              type: TESTING_ALLOWANCE_THRESHOLD_CROSSED,
              tenantId,
              occurredAt: at,
              object: allowanceThresholdObject(tenantId, tenant.month, threshold, allowance),
              traceparent,
            });
            announced++;
          }
        },
      );
      if (announced > 0) deps.events.kick();
      logger.info(
        { tenantId, plan: outcome.tenant.plan, reason: change.reason, changed: outcome.changed },
        outcome.changed ? "tenant plan changed" : "tenant plan unchanged (already on it)",
      );
      return { tenant: toProtoTenant(outcome.tenant, allowance), changed: outcome.changed };
    },
    async getUsageLimits(request) {
      const limits = await deps.tenants.getUsageLimits(requireTenantId(request.tenantId));
      return { limits: limits === undefined ? undefined : toProtoLimits(toStoredLimits(limits)) };
    },
    async setRecipientConsent(request, { logger }) {
      const tenantId = requireTenantId(request.tenantId);
      const recipient = parseRecipient(request.to);
      await deps.tenants.setOptOut(tenantId, recipient, request.optedOut);
      logger.info({ tenantId, to: maskRecipient(recipient), optedOut: request.optedOut }, "recipient consent changed");
      return { tenantId, recipient, optedOut: request.optedOut };
    },
  };
}

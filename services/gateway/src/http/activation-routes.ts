import type { ActivationManifest, Capability } from "@platform/proto/notify/v1/activation";
import { ApiError, callService as call } from "./api-error.js";
import { requestIdOf, tenantIdOf, type TenantRoute } from "./tenant-route.js";

const orNull = (value: string) => (value === "" ? null : value);

export function manifestToJson(manifest: ActivationManifest | undefined): Record<string, unknown> {
  if (!manifest) throw new ApiError(500, "notify answered without a manifest");
  return {
    tenantId: manifest.tenantId,
    state: manifest.state,
    steps: manifest.steps.map((step) => ({ name: step.name, state: step.state, updatedAt: orNull(step.updatedAt) })),
    blockingReasons: manifest.blockingReasons.map((reason) => ({
      code: reason.code,
      capability: orNull(reason.capability),
      since: reason.since,
    })),
    requiredCapabilities: manifest.requiredCapabilities,
    version: Number(manifest.version),
    updatedAt: manifest.updatedAt,
  };
}

export function capabilityToJson(capability: Capability): Record<string, unknown> {
  return {
    name: capability.name,
    state: capability.state,
    required: capability.required,
    lastResult: orNull(capability.lastResult),
    lastCheckedAt: orNull(capability.lastCheckedAt),
    reasonCode: orNull(capability.reasonCode),
    changedAt: orNull(capability.changedAt),
  };
}

const tag = "activation";

/** Activation (provisioning, validation, live or stalled) and the capability report (owned by notify). */
export const activationRoutes: TenantRoute[] = [
  {
    operationId: "startActivation",
    method: "POST",
    path: "/api/v1/tenants/:tenantId/activation",
    scope: "tenant:manage",
    mutation: true,
    tag,
    summary: "Start or resume activation.",
    description:
      "From `provisioning`, `validation` or `stalled`, activation is evaluated now: every required capability " +
      "passing and none failing makes the tenant `live` (event `tenant.activated`); a failing capability " +
      "leaves it `stalled` with `blockingReasons` (event `tenant.validation_failed` on entering it); otherwise " +
      "it waits in `validation` for the checks. A `live` tenant is left as it is. No body. Answers the " +
      "manifest with `idempotencyStatus` `Applied`, or `Replayed` (same body, `Idempotent-Replayed: true`) " +
      "for a repeat of the Idempotency-Key.",
    responseSchema: "ActivationResult",
    problems: [],
    async handle(ctx, deps) {
      const idempotencyKey = ctx.state.idempotencyKey as string;
      const response = await call(
        deps.notify.startActivation({ tenantId: tenantIdOf(ctx), idempotencyKey }, requestIdOf(ctx)),
        { idempotencyKey, howToCheck: "Activation may have started: read GET /activation before starting it again" },
      );
      if (response.replayed) ctx.set("Idempotent-Replayed", "true");
      ctx.body = {
        ...manifestToJson(response.manifest),
        idempotencyStatus: response.replayed ? "Replayed" : "Applied",
      };
    },
  },
  {
    operationId: "getActivation",
    method: "GET",
    path: "/api/v1/tenants/:tenantId/activation",
    scope: "tenant:read",
    mutation: false,
    poll: true,
    tag,
    summary: "Read the activation manifest.",
    description:
      "The activation `state`, its steps (`provisioning`, `validation`, `live`) with their states, and the " +
      "`blockingReasons`: each failing capability with its reason code, and each required capability not " +
      "checked yet (`activation.capability_unchecked`).",
    responseSchema: "ActivationManifest",
    problems: [],
    async handle(ctx, deps) {
      const { manifest } = await call(deps.notify.getActivation({ tenantId: tenantIdOf(ctx) }, requestIdOf(ctx)));
      ctx.body = manifestToJson(manifest);
    },
  },
  {
    operationId: "getCapabilities",
    method: "GET",
    path: "/api/v1/tenants/:tenantId/capabilities",
    scope: "tenant:read",
    mutation: false,
    poll: true,
    tag,
    summary: "Read the capability report.",
    description:
      "Each capability activation requires or that was ever checked: `on` (its last check passed), `off` " +
      "(failed, with its `reasonCode`) or `unchecked`, with its last check.",
    responseSchema: "CapabilityReport",
    problems: [],
    async handle(ctx, deps) {
      const tenantId = tenantIdOf(ctx);
      const { capabilities } = await call(deps.notify.getCapabilities({ tenantId }, requestIdOf(ctx)));
      ctx.body = { tenantId, data: capabilities.map(capabilityToJson) };
    },
  },
];

import { callService } from "../../http/api-error.js";
import { idempotencyKeyOf, callOptionsOf, tenantIdOf, type TenantRoute } from "../../http/route.js";
import { capabilityToJson, manifestToJson } from "./json.js";

const tag = "activation";

/** Activation (provisioning, validation, live or stalled) and the capability report (owned by notify). */
export const activationRoutes: TenantRoute[] = [
  {
    surface: "tenant",
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
      const idempotencyKey = idempotencyKeyOf(ctx);
      const response = await callService(
        deps.notify.startActivation({ tenantId: tenantIdOf(ctx), idempotencyKey }, callOptionsOf(ctx)),
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
    surface: "tenant",
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
      const { manifest } = await callService(
        deps.notify.getActivation({ tenantId: tenantIdOf(ctx) }, callOptionsOf(ctx)),
      );
      ctx.body = manifestToJson(manifest);
    },
  },
  {
    surface: "tenant",
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
      const { capabilities } = await callService(deps.notify.getCapabilities({ tenantId }, callOptionsOf(ctx)));
      ctx.body = { tenantId, data: capabilities.map(capabilityToJson) };
    },
  },
];

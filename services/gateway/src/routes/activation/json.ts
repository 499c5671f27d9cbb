import type { ActivationManifest, Capability } from "@platform/proto/notify/v1/activation";
import { ApiError } from "../../http/api-error.js";

export const orNull = (value: string) => (value === "" ? null : value);

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

/**
 * A command's call to a service, its refusals said the operator's way: an unknown tenant as
 * "no such tenant: ID", other refusals in the service's words (exit 2), an unreachable service as
 * the stack seeming down (exit 1).
 */
import { status as GrpcStatus } from "@grpc/grpc-js";
import { apiErrorFromGrpc } from "../http/api-error.js";
import { tenantToJson } from "../routes/representations.js";
import { StackDownError, UsageError } from "./errors.js";
import type { Resources } from "./resources.js";

/**
 * Calls a service. tenant.not_found becomes "no such tenant: ID"; other refusals keep the
 * service's message (exit 2); an unreachable service says the stack seems down.
 */
export async function reachService<T>(
  service: string,
  address: string,
  tenantId: string,
  call: () => Promise<T>,
): Promise<T> {
  try {
    return await call();
  } catch (error) {
    const grpcCode = (error as { code?: unknown }).code;
    if (grpcCode === GrpcStatus.UNAVAILABLE || grpcCode === GrpcStatus.DEADLINE_EXCEEDED) {
      throw new StackDownError(service, address, error);
    }
    const apiError = apiErrorFromGrpc(error);
    if (apiError.options.code === "tenant.not_found") throw new UsageError(`no such tenant: ${tenantId}`);
    if (apiError.options.code === "tenant.version_mismatch") {
      // A stale expectedVersion is a failed version precondition, as HTTP's 412 says it.
      throw new UsageError(`${apiError.options.code} (412): ${apiError.message}`);
    }
    if (apiError.status < 500) throw new UsageError(apiError.message);
    throw new Error(`${service} failed: ${(error as Error).message}`);
  }
}

/** A call to notify about one tenant (empty when none). */
export const reachNotify = <T>(resources: Resources, tenantId: string, call: () => Promise<T>): Promise<T> =>
  reachService("notify", resources.notifyAddress, tenantId, call);

/** A call to notify answering a tenant: the tenant as the API shows it. */
export async function tenantFromNotify(
  resources: Resources,
  tenantId: string,
  call: () => Promise<{ tenant?: Parameters<typeof tenantToJson>[0] }>,
) {
  return tenantToJson((await reachNotify(resources, tenantId, call)).tenant);
}

/** Every tenant must exist in notify; names all that do not. */
export async function requireTenants(resources: Resources, tenantIds: string[]): Promise<void> {
  const missing: string[] = [];
  for (const tenantId of tenantIds) {
    try {
      await reachNotify(resources, tenantId, () => resources.notify().getTenant({ tenantId }, resources.call()));
    } catch (error) {
      if (error instanceof UsageError && error.message.startsWith("no such tenant")) missing.push(tenantId);
      else throw error;
    }
  }
  if (missing.length > 0) throw new UsageError(`no such tenant: ${missing.join(", ")}`);
}

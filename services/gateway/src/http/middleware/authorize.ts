import type { Middleware } from "koa";
import { ApiError } from "../api-error.js";
import { acceptedScopesOf, isTenantId, tenantIdOf, type TenantRoute } from "../route.js";
import { parseIdempotencyKey } from "./idempotency-key.js";

/** Same detail as notify's tenant.not_found, so an ungranted tenant and a missing one look alike. */
export const TENANT_NOT_FOUND_DETAIL = "no tenant with this id is available to this key";

/**
 * After authentication: the route's scope (403 auth.scope_missing), then the tenantId's syntax
 * (400 request.invalid: it cannot name any tenant, so saying so reveals nothing), then the tenant
 * grant (404 tenant.not_found, identical to a tenant that does not exist), then, for mutations,
 * the Idempotency-Key (400 request.idempotency_key_required / _invalid).
 */
export function authorize(route: TenantRoute): Middleware {
  // The route's scopes are fixed: worked out once, not on every request.
  const accepted = acceptedScopesOf(route);
  const scopeMissing = `this API key lacks the scope ${accepted.join(" or ")}`;
  return async (ctx, next) => {
    const key = ctx.state.apiKey;
    if (!accepted.some((scope) => key.scopes.includes(scope))) {
      throw new ApiError(403, scopeMissing, { code: "auth.scope_missing" });
    }
    const tenantId = tenantIdOf(ctx);
    if (!isTenantId(tenantId)) {
      throw new ApiError(400, "tenantId must be 1-64 characters of A-Z a-z 0-9 _ -", { code: "request.invalid" });
    }
    if (!key.tenantIds.includes(tenantId)) {
      throw new ApiError(404, TENANT_NOT_FOUND_DETAIL, { code: "tenant.not_found" });
    }
    if (route.mutation) ctx.state.idempotencyKey = parseIdempotencyKey(ctx.get("idempotency-key") || undefined);
    await next();
  };
}

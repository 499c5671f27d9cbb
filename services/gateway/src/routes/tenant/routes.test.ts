import { Metadata, status } from "@grpc/grpc-js";
import type { Context } from "koa";
import { describe, expect, it } from "vitest";
import { ApiError } from "../../http/api-error.js";
import type { TenantRouteDeps } from "../../http/route.js";
import { tenantRecordRoutes } from "./routes.js";

/** A gRPC NOT_FOUND as notify answers it, with its error code. */
function notFound(code: string, details: string) {
  const metadata = new Metadata();
  metadata.set("error-code", code);
  return Object.assign(new Error(details), { code: status.NOT_FOUND, details, metadata });
}

describe("GET /api/v1/tenants/:tenantId", () => {
  const route = tenantRecordRoutes.find((r) => r.operationId === "getTenant")!;
  const ctx = () => ({ method: "GET", params: { tenantId: "ten_ghost" }, state: {} }) as unknown as Context;

  it("a tenant that does not exist is 404 tenant.not_found, even when the channel's read fails first", async () => {
    const tenantMissing = notFound("tenant.not_found", "tenant not found");
    const deps = {
      notify: {
        // The channel's read fails at once, the tenant's a moment later: the tenant's decides.
        readChannel: () => Promise.reject(notFound("tenant.not_found", "tenant not found")),
        getTenant: () => new Promise((_, reject) => setTimeout(() => reject(tenantMissing), 20)),
      },
    } as unknown as TenantRouteDeps;
    const error = await Promise.resolve(route.handle(ctx(), deps)).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ApiError);
    expect(error).toMatchObject({ status: 404, options: { code: "tenant.not_found", cause: tenantMissing } });
  });

  it("a channel read failing for another reason is mapped too, never an unmapped 500", async () => {
    const deps = {
      notify: {
        readChannel: () =>
          Promise.reject(Object.assign(new Error("down"), { code: status.UNAVAILABLE, details: "down" })),
        getTenant: () => Promise.resolve({ tenant: {} }),
      },
    } as unknown as TenantRouteDeps;
    const error = await Promise.resolve(route.handle(ctx(), deps)).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ApiError);
    expect(error).toMatchObject({ status: 503, options: { code: "service.unavailable" } });
  });
});

import { Metadata, status as GrpcStatus } from "@grpc/grpc-js";
import { GrpcCallError } from "@platform/service-kit/grpc-client";
import type { Context } from "koa";
import { describe, expect, it } from "vitest";
import { callOptionsOf } from "./route.js";

/** A request's context as the router leaves it: its method, and the checked Idempotency-Key if any. */
function contextOf(method: string, idempotencyKey?: string) {
  const lines: { fields: Record<string, unknown>; msg: string }[] = [];
  const ctx = {
    method,
    state: {
      requestId: "req_1",
      traceparent: undefined,
      idempotencyKey,
      log: () => ({ warn: (fields: Record<string, unknown>, msg: string) => lines.push({ fields, msg }) }),
    },
  } as unknown as Context;
  return { ctx, lines };
}

describe("callOptionsOf: which calls may be made again on another replica", () => {
  it.each([
    ["GET", undefined, true],
    ["HEAD", undefined, true],
    ["POST", "key-12345678", true],
    ["PUT", "key-12345678", true],
    ["DELETE", "key-12345678", true],
    ["POST", undefined, false],
  ] as const)("%s with key %j: repeatable %j", (method, key, repeatable) => {
    const { ctx } = contextOf(method, key);
    expect(callOptionsOf(ctx)).toMatchObject({ requestId: "req_1", repeatable });
  });

  it("logs each retry at warn: where it failed, where it went, how it ended", () => {
    const { ctx, lines } = contextOf("GET");
    const error = new GrpcCallError(GrpcStatus.UNAVAILABLE, "Connection dropped", new Metadata());
    const options = callOptionsOf(ctx);
    options.onReplicaRetry!({
      method: "/catalog.v1.CatalogService/ListPets",
      from: "10.0.0.1:50051",
      error,
      to: "10.0.0.2:50051",
      code: GrpcStatus.OK,
    });
    options.onReplicaRetry!({
      method: "/m",
      from: "10.0.0.1:50051",
      error,
      to: undefined,
      code: GrpcStatus.UNAVAILABLE,
    });
    expect(lines).toEqual([
      {
        fields: {
          method: "/catalog.v1.CatalogService/ListPets",
          from: "10.0.0.1:50051",
          to: "10.0.0.2:50051",
          error: { code: "UNAVAILABLE", details: "Connection dropped" },
          outcome: "OK",
        },
        msg: "a call's connection died before an answer; retried on another replica",
      },
      {
        fields: {
          method: "/m",
          from: "10.0.0.1:50051",
          to: null,
          error: { code: "UNAVAILABLE", details: "Connection dropped" },
          outcome: "UNAVAILABLE",
        },
        msg: "a call's connection died before an answer and no other replica was ready",
      },
    ]);
  });
});

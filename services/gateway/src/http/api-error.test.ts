import { Metadata, status as Status } from "@grpc/grpc-js";
import { DownstreamUnreachableError } from "@platform/service-kit/fail-fast-client";
import { describe, expect, it } from "vitest";
import { apiErrorFromGrpc, httpStatusForGrpc, outcomeMayHaveApplied, type MutationRetry } from "./api-error.js";

function grpcError(code: Status, details: string, errorCode?: string) {
  const metadata = new Metadata();
  if (errorCode) metadata.set("error-code", errorCode);
  return Object.assign(new Error(details), { code, details, metadata });
}

describe("gRPC status -> HTTP", () => {
  it("has an HTTP status for every gRPC code", () => {
    const codes = Object.values(Status).filter((v): v is Status => typeof v === "number");
    for (const code of codes) expect(httpStatusForGrpc[code], Status[code]).toBeGreaterThanOrEqual(200);
  });

  it.each([
    [Status.INVALID_ARGUMENT, 400],
    [Status.NOT_FOUND, 404],
    [Status.ALREADY_EXISTS, 409],
    [Status.FAILED_PRECONDITION, 409],
    [Status.PERMISSION_DENIED, 403],
    [Status.UNAUTHENTICATED, 401],
    [Status.RESOURCE_EXHAUSTED, 429],
    [Status.UNAVAILABLE, 503],
    [Status.DEADLINE_EXCEEDED, 503],
    [Status.INTERNAL, 500],
  ])("maps %s to %i", (code, http) => {
    expect(apiErrorFromGrpc(grpcError(code, "x")).status).toBe(http);
  });

  it("keeps a client error's message and stable code", () => {
    const error = apiErrorFromGrpc(grpcError(Status.NOT_FOUND, "pet 9 not found", "pet.not_found"));
    expect(error).toMatchObject({ status: 404, message: "pet 9 not found", options: { code: "pet.not_found" } });
  });

  it("hides a server error's details and keeps them as the cause", () => {
    const cause = grpcError(Status.INTERNAL, "relation pets does not exist");
    const error = apiErrorFromGrpc(cause);
    expect(error.message).toBe("internal error");
    expect(error.cause).toBe(cause);
  });

  it("asks for a retry on unavailability", () => {
    const error = apiErrorFromGrpc(grpcError(Status.UNAVAILABLE, "connect ECONNREFUSED 10.0.0.7:50051"));
    expect(error.message).not.toContain("10.0.0.7");
    expect(error.options.headers?.["retry-after"]).toBe("1");
  });

  it("turns a 429's trailing retry-after (notify's pacing) into Retry-After, and ignores it elsewhere or malformed", () => {
    const paced = grpcError(Status.RESOURCE_EXHAUSTED, "paced", "partner.channel_rate_limited");
    paced.metadata.set("retry-after", "3");
    expect(apiErrorFromGrpc(paced, { idempotencyKey: "k", howToCheck: "x" })).toMatchObject({
      status: 429,
      options: { code: "partner.channel_rate_limited", headers: { "retry-after": "3" } },
    });
    const plain = grpcError(Status.RESOURCE_EXHAUSTED, "throttled", "partner.channel_rate_limited");
    expect(apiErrorFromGrpc(plain).options.headers).toBeUndefined();
    const garbled = grpcError(Status.RESOURCE_EXHAUSTED, "paced", "partner.channel_rate_limited");
    garbled.metadata.set("retry-after", "0.5");
    expect(apiErrorFromGrpc(garbled).options.headers).toBeUndefined();
    const notFound = grpcError(Status.NOT_FOUND, "gone", "pet.not_found");
    notFound.metadata.set("retry-after", "3");
    expect(apiErrorFromGrpc(notFound).options.headers).toBeUndefined();
  });

  it("treats a non-gRPC failure as internal", () => {
    expect(apiErrorFromGrpc(new TypeError("boom")).status).toBe(500);
  });
});

describe("mutations whose outcome is unknown", () => {
  const howToCheck = "The pet may have been created: list pets before creating it again";
  const unkeyed: MutationRetry = { idempotencyKey: undefined, howToCheck };
  const keyed: MutationRetry = { idempotencyKey: "abc-123-x", howToCheck };
  const sentThenLost = [
    ["a deadline", grpcError(Status.DEADLINE_EXCEEDED, "Deadline exceeded after 0.501s")],
    ["a dropped connection", grpcError(Status.UNAVAILABLE, "Connection dropped")],
    ["a reset stream", grpcError(Status.UNAVAILABLE, "Received RST_STREAM with code 0")],
    ["a cancellation", grpcError(Status.CANCELLED, "Call cancelled")],
  ] as const;
  const certainlyNotApplied = [
    ["no connection", grpcError(Status.UNAVAILABLE, "No connection established. Last error: ECONNREFUSED")],
    ["the service's own UNAVAILABLE", grpcError(Status.UNAVAILABLE, "database unreachable", "service.unavailable")],
    ["a call refused by the gateway's view of the service (fail fast)", new DownstreamUnreachableError("catalog")],
  ] as const;

  it.each(sentThenLost)("counts %s as possibly applied", (_label, error) => {
    expect(outcomeMayHaveApplied(error)).toBe(true);
  });

  it.each(certainlyNotApplied)("counts %s as not applied", (_label, error) => {
    expect(outcomeMayHaveApplied(error)).toBe(false);
  });

  it.each(sentThenLost)("answers %s without a key with 504, no Retry-After, and says to check first", (_l, error) => {
    const answer = apiErrorFromGrpc(error, unkeyed);
    expect(answer.status).toBe(504);
    expect(answer.options.headers?.["retry-after"]).toBeUndefined();
    expect(answer.message).toContain(howToCheck);
    expect(answer.message).toContain("Idempotency-Key");
  });

  it.each(sentThenLost)("answers %s with a key with 503 and says to retry with the same key", (_l, error) => {
    const answer = apiErrorFromGrpc(error, keyed);
    expect(answer.status).toBe(503);
    expect(answer.options.headers?.["retry-after"]).toBe("1");
    expect(answer.message).toMatch(/retry .*the same Idempotency-Key/);
  });

  it.each(certainlyNotApplied)("answers %s without a key with a plain 503 retry", (_label, error) => {
    const answer = apiErrorFromGrpc(error, unkeyed);
    expect(answer.status).toBe(503);
    expect(answer.options.headers?.["retry-after"]).toBe("1");
  });

  it("keeps a read's deadline a plain 503", () => {
    expect(apiErrorFromGrpc(grpcError(Status.DEADLINE_EXCEEDED, "Deadline exceeded")).status).toBe(503);
  });

  it("answers a call refused by the gateway's view 503 service.unavailable with Retry-After, whatever the call", () => {
    for (const mutation of [undefined, unkeyed, keyed]) {
      const answer = apiErrorFromGrpc(new DownstreamUnreachableError("notify"), mutation);
      expect(answer).toMatchObject({ status: 503, options: { code: "service.unavailable" } });
      expect(answer.options.headers?.["retry-after"]).toBe("1");
      expect(answer.message).not.toContain("notify");
    }
  });
});

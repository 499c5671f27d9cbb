import { status as Status } from "@grpc/grpc-js";
import { afterEach, describe, expect, it, vi } from "vitest";
import { DownstreamView } from "./downstream-view.js";
import { DownstreamUnreachableError, failFastWhileUnreachable } from "./fail-fast-client.js";
import { GrpcCallError } from "./grpc-client.js";
import type { ServingStatus } from "./grpc-health.js";

describe("failFastWhileUnreachable", () => {
  let view: DownstreamView | undefined;
  afterEach(() => view?.stop());

  const viewAnswering = async (status: ServingStatus) => {
    view = new DownstreamView("notify", () => Promise.resolve(status), {
      intervalMs: 60_000,
      failureThreshold: 1,
    });
    await view.start(1_000);
    return view;
  };
  const fakeClient = () => ({
    getTenant: vi.fn((request: { id: string }, options: { requestId: string }) =>
      Promise.resolve({ id: request.id, requestId: options.requestId }),
    ),
    close: vi.fn(),
  });

  it("passes every call through while the view says reachable", async () => {
    const client = fakeClient();
    const guarded = failFastWhileUnreachable(client, await viewAnswering("SERVING"));
    await expect(guarded.getTenant({ id: "t1" }, { requestId: "r1" })).resolves.toEqual({ id: "t1", requestId: "r1" });
    guarded.close();
    expect(client.close).toHaveBeenCalledOnce();
  });

  it("refuses every call at once, before anything is sent, while the view says unreachable", async () => {
    const client = fakeClient();
    const guarded = failFastWhileUnreachable(client, await viewAnswering("UNREACHABLE"));
    const error = await guarded.getTenant({ id: "t1" }, { requestId: "r1" }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(DownstreamUnreachableError);
    expect(error).toBeInstanceOf(GrpcCallError);
    expect(error).toMatchObject({ code: Status.UNAVAILABLE, notSent: true, downstream: "notify" });
    expect(client.getTenant).not.toHaveBeenCalled();
  });
});

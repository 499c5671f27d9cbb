/** The send stage without NATS or a network (fakes: attempt-fakes.testing.ts). */
import { describe, expect, it } from "vitest";
import { signatureHeaderName, signDelivery } from "../domain/signature.js";
import {
  answered,
  attemptOf,
  capturedLogger,
  claimed,
  claimedDelivery,
  jobMessage,
  secret,
  stageDeps,
} from "./attempt-fakes.testing.js";
import { sendDelivery } from "./send-stage.js";
import { userAgent } from "./sign-stage.js";
import { TargetNotAllowedError } from "./target-resolver.js";

describe("send", () => {
  const secrets = { current: secret, previous: null };

  it("POSTs the payload, signed, to the address the resolver approved, within what is left of the deadline", async () => {
    const delivery = claimedDelivery();
    const { deps: d, requests } = stageDeps(claimed(delivery));
    const { msg } = jobMessage();
    const before = Math.floor(Date.now() / 1000);
    const response = await sendDelivery(msg, attemptOf(delivery), secrets, d);
    expect(response.result).toEqual({ kind: "response", status: 200 });
    expect(requests).toHaveLength(1);
    const [request] = requests;
    expect(request!.url.href).toBe("https://hooks.example.com/in");
    expect(request!.target).toEqual({ address: "93.184.216.34", family: 4 });
    expect(request!.body.toString()).toBe(delivery.payload);
    expect(request!.timeoutMs).toBeGreaterThan(0);
    expect(request!.timeoutMs).toBeLessThanOrEqual(2_000);
    const t = Number(/^t=(\d+),/.exec(request!.headers[signatureHeaderName]!)![1]);
    expect(t).toBeGreaterThanOrEqual(before);
    expect(request!.headers[signatureHeaderName]).toBe(signDelivery(secrets, request!.body, new Date(t * 1000)));
    expect(request!.headers).toMatchObject({ "service-delivery-id": "dlv_1", "user-agent": userAgent });
  });

  it("fails a refused target without a connection, and says why", async () => {
    const delivery = claimedDelivery();
    const { deps: d, requests } = stageDeps(claimed(delivery));
    d.targets = {
      resolve: () => Promise.reject(new TargetNotAllowedError("hooks.example.com", "private", "10.0.0.5")),
    };
    const { logger, lines } = capturedLogger();
    const response = await sendDelivery(jobMessage().msg, attemptOf(delivery, logger), secrets, d);
    expect(response).toMatchObject({ result: { kind: "target_not_allowed" }, truncated: false });
    expect(response.responseBody).toHaveLength(0);
    expect(requests).toEqual([]);
    expect(lines).toMatchObject([
      {
        level: "warn",
        deliveryId: "dlv_1",
        refusal: "private",
        address: "10.0.0.5",
        msg: "the endpoint's URL is not a target deliveries may reach; no connection made",
      },
    ]);
  });

  it("times out when resolving the host takes the whole deadline, without a connection", async () => {
    const delivery = claimedDelivery();
    const { deps: d, requests } = stageDeps(claimed(delivery));
    d.targets = { resolve: () => new Promise(() => undefined) };
    d.timeoutMs = 20;
    const response = await sendDelivery(jobMessage().msg, attemptOf(delivery), secrets, d);
    expect(response.result).toEqual({ kind: "timeout" });
    expect(response.durationMs).toBeGreaterThanOrEqual(15);
    expect(requests).toEqual([]);
  });

  it("lets any other resolver failure through (the job comes back)", async () => {
    const delivery = claimedDelivery();
    const { deps: d } = stageDeps(claimed(delivery));
    d.targets = { resolve: () => Promise.reject(new Error("resolver broke")) };
    await expect(sendDelivery(jobMessage().msg, attemptOf(delivery), secrets, d)).rejects.toThrow("resolver broke");
  });

  it("keeps the job alive while the POST runs, and stops when it ends; the duration is the stage's own", async () => {
    const delivery = claimedDelivery();
    const { deps: d, respondWith } = stageDeps(claimed(delivery));
    d.heartbeatEveryMs = 10;
    const { msg, seen } = jobMessage();
    // The receiver answers once the job has been kept alive twice.
    respondWith(
      () =>
        new Promise((resolve) => {
          const check = setInterval(() => {
            if (seen.heartbeats < 2) return;
            clearInterval(check);
            resolve(answered(200, 1));
          }, 5);
        }),
    );
    const response = await sendDelivery(msg, attemptOf(delivery), secrets, d);
    expect(seen.heartbeats).toBeGreaterThanOrEqual(2);
    expect(response.durationMs).toBeGreaterThanOrEqual(15);
    const after = seen.heartbeats;
    await new Promise((resolve) => setTimeout(resolve, 40));
    expect(seen.heartbeats).toBe(after);
  });
});

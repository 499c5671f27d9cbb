import { describe, expect, it } from "vitest";
import { decodeDeliveryJob, encodeDeliveryJob } from "./delivery-queue.js";
import { deliverySubject, endpointOfDeliverySubject, eventSubject, streamNames } from "./streams.js";

describe("delivery job messages", () => {
  it("carry the delivery id and generation as JSON, and nothing else", () => {
    const bytes = encodeDeliveryJob({ deliveryId: "dlv_1", generation: 3, endpointId: "ep_1" });
    expect(Buffer.from(bytes).toString()).toBe('{"deliveryId":"dlv_1","generation":3}');
    expect(decodeDeliveryJob(bytes)).toEqual({ deliveryId: "dlv_1", generation: 3 });
  });

  it("are refused when malformed", () => {
    for (const text of ["", "{", "[]", '{"deliveryId":1,"generation":1}', '{"deliveryId":"d","generation":1.5}']) {
      expect(decodeDeliveryJob(Buffer.from(text))).toBeUndefined();
    }
  });
});

describe("stream names and subjects", () => {
  it("are prefixed by the namespace", () => {
    expect(streamNames("t1_")).toEqual({ namespace: "t1_", events: "t1_EVENTS", deliveries: "t1_WEBHOOK_DELIVERIES" });
    expect(streamNames("")).toEqual({ namespace: "", events: "EVENTS", deliveries: "WEBHOOK_DELIVERIES" });
    expect(eventSubject("t1_", "acme", "booking.created")).toBe("t1_events.acme.booking.created");
    expect(deliverySubject("t1_", "ep_ab")).toBe("t1_webhooks.deliveries.ep_ab");
    expect(endpointOfDeliverySubject("t1_", "t1_webhooks.deliveries.ep_ab")).toBe("ep_ab");
  });
});

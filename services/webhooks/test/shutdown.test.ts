/**
 * SIGTERM lets an attempt in flight finish and be recorded before the webhooks process exits 0.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  createTestCertificates,
  eventually,
  startReceiver,
  type TestCertificates,
  type TestReceiver,
} from "@platform/local-stack/https-receiver";
import { startWebhooks, type WebhooksUnderTest } from "./webhooks-process.js";

describe("the webhooks process on SIGTERM", () => {
  let certs: TestCertificates;
  let hooks: TestReceiver;
  let service: WebhooksUnderTest;
  beforeAll(async () => {
    certs = await createTestCertificates();
    hooks = await startReceiver(certs, () => ({ status: 200, body: "slowly", delayMs: 2_000 }));
    service = await startWebhooks({ name: "whstop", caPath: certs.caPath });
  });
  afterAll(async () => {
    await service?.stop();
    await hooks?.close();
    await certs?.remove();
  });

  it("finishes the attempt in flight, records it, then exits 0", async () => {
    const endpoint = await service.seedEndpoint({ tenantId: "stop", url: hooks.url, eventTypes: ["booking.created"] });
    await service.publish({ tenantId: "stop", type: "booking.created", dataJson: '{"booking_id":"b"}' });
    await eventually("the request in flight", () => hooks.requests.length === 1);

    expect(await service.process.stop("SIGTERM")).toBe(0);
    const delivery = await service
      .db("deliveries")
      .where({ endpoint_id: endpoint.id })
      .first<{ id: string; status: string }>("id", "status");
    expect(delivery?.status).toBe("succeeded");
    const attempts = await service
      .db("attempts")
      .where({ delivery_id: delivery.id })
      .select("status_code", "response_body");
    expect(attempts).toEqual([{ status_code: 200, response_body: Buffer.from("slowly") }]);
    expect(service.process.logs.map((line) => line.msg)).toContain("stopped");
  });
});

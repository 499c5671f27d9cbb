import { describe, expect, it } from "vitest";
import {
  applyProviderStatus,
  deliveryEventId,
  deliveryEventObject,
  type DeliveryProgress,
  type ProviderStatusReport,
} from "./delivery-status.js";

const t = (s: number) => new Date(Date.UTC(2026, 10, 27, 10, 0, s));
const accepted: DeliveryProgress = {
  status: "accepted",
  acceptedAt: t(0),
  sentAt: null,
  deliveredAt: null,
  readAt: null,
  failedAt: null,
  failureCode: null,
  providerCode: null,
};

/** Applies reports in order; the final progress and every step announced. */
function run(reports: ProviderStatusReport[], from = accepted) {
  let progress = from;
  const steps: string[] = [];
  for (const report of reports) {
    const applied = applyProviderStatus(progress, report);
    progress = applied.next;
    steps.push(...applied.steps);
  }
  return { progress, steps };
}

describe("a notification's delivery status", () => {
  it("goes accepted -> sent -> delivered -> read, announcing delivered and read", () => {
    const { progress, steps } = run([
      { status: "sent", at: t(1) },
      { status: "delivered", at: t(2) },
      { status: "read", at: t(3) },
    ]);
    expect(progress).toMatchObject({ status: "read", sentAt: t(1), deliveredAt: t(2), readAt: t(3) });
    expect(steps).toEqual(["delivered", "read"]);
  });

  it("takes read first as delivered too, and a late delivered changes nothing", () => {
    const { progress, steps } = run([
      { status: "read", at: t(3) },
      { status: "delivered", at: t(2) },
      { status: "sent", at: t(1) },
    ]);
    expect(progress).toMatchObject({ status: "read", sentAt: t(3), deliveredAt: t(3), readAt: t(3) });
    expect(steps).toEqual(["delivered", "read"]);
  });

  it("treats repeats as no-ops", () => {
    const { progress, steps } = run([
      { status: "delivered", at: t(2) },
      { status: "delivered", at: t(5) },
      { status: "read", at: t(6) },
      { status: "read", at: t(7) },
    ]);
    expect(progress).toMatchObject({ status: "read", deliveredAt: t(2), readAt: t(6) });
    expect(steps).toEqual(["delivered", "read"]);
  });

  it("fails once, for good, with the mapped code; too late after delivery", () => {
    const failed = run([
      { status: "sent", at: t(1) },
      { status: "failed", at: t(2), failureCode: "partner.recipient_undeliverable", providerCode: "131026" },
      { status: "failed", at: t(3), failureCode: "notification.delivery_failed", providerCode: "1" },
      { status: "delivered", at: t(4) },
    ]);
    expect(failed.progress).toMatchObject({
      status: "failed",
      failedAt: t(2),
      failureCode: "partner.recipient_undeliverable",
      providerCode: "131026",
      deliveredAt: null,
    });
    expect(failed.steps).toEqual(["failed"]);
    const late = run([
      { status: "delivered", at: t(1) },
      { status: "failed", at: t(2), failureCode: "notification.delivery_failed" },
    ]);
    expect(late.progress).toMatchObject({ status: "delivered", failedAt: null });
    expect(late.steps).toEqual(["delivered"]);
  });

  it("names each step's event the same every time, and its snapshot holds ids, status, codes and times only", () => {
    expect(deliveryEventId("ntf_1", "read")).toBe(deliveryEventId("ntf_1", "read"));
    expect(deliveryEventId("ntf_1", "read")).not.toBe(deliveryEventId("ntf_1", "delivered"));
    expect(deliveryEventId("ntf_1", "read")).toMatch(/^evt_[0-9a-f]{24}$/);
    const { progress } = run([{ status: "read", at: t(3) }]);
    expect(deliveryEventObject({ notificationId: "ntf_1", type: "reminder", createdAt: t(0), progress })).toEqual({
      notification_id: "ntf_1",
      type: "reminder",
      status: "read",
      created_at: t(0).toISOString(),
      accepted_at: t(0).toISOString(),
      sent_at: t(3).toISOString(),
      delivered_at: t(3).toISOString(),
      read_at: t(3).toISOString(),
    });
  });
});

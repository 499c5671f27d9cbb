import { createHash } from "node:crypto";

/**
 * A notification's delivery status (issue 32 item 4; docs/notifications.md "Status lifecycle"):
 * `accepted` (the channel took the send) -> `sent` -> `delivered` -> `read`, or `failed`. It never
 * goes backwards: statuses arrive out of order and twice, so each step only fills its own time
 * (and the times it implies: `read` implies `delivered` and `sent`), a repeat or a late step
 * changes nothing, and `failed` is final (and comes too late once the message was delivered).
 */
export const deliveryStatuses = ["accepted", "sent", "delivered", "read", "failed"] as const;
export type DeliveryStatus = (typeof deliveryStatuses)[number];

/** What a provider callback can report about a message the platform sent. */
export type ProviderStatusKind = "sent" | "delivered" | "read" | "failed";

/** The steps partners are told about (notification.delivered|read|failed). */
export type AnnouncedStep = "delivered" | "read" | "failed";

export interface DeliveryProgress {
  status: DeliveryStatus | null;
  acceptedAt: Date | null;
  sentAt: Date | null;
  deliveredAt: Date | null;
  readAt: Date | null;
  failedAt: Date | null;
  /** A catalogue code once failed. */
  failureCode: string | null;
  /** The provider's own error code once failed (operators only; never shown to partners). */
  providerCode: string | null;
}

export interface ProviderStatusReport {
  status: ProviderStatusKind;
  /** When the provider says it happened. */
  at: Date;
  /** Failed only: the catalogue code the provider's error maps to, and the provider's own code. */
  failureCode?: string | null;
  providerCode?: string | null;
}

const rank: Record<Exclude<DeliveryStatus, "failed">, number> = { accepted: 0, sent: 1, delivered: 2, read: 3 };

/**
 * The progress after a report, and the steps it newly reached that partners are told about (in
 * order). Unchanged progress and no steps for a repeat, a late step or anything after `failed`.
 */
export function applyProviderStatus(
  current: DeliveryProgress,
  report: ProviderStatusReport,
): { next: DeliveryProgress; steps: AnnouncedStep[] } {
  if (current.status === "failed") return { next: current, steps: [] };
  const next: DeliveryProgress = { ...current };
  const steps: AnnouncedStep[] = [];
  if (report.status === "failed") {
    // Too late: the message reached the customer's device; a failure report cannot undo that.
    if (current.deliveredAt !== null || current.readAt !== null) return { next: current, steps: [] };
    next.status = "failed";
    next.failedAt = report.at;
    next.failureCode = report.failureCode ?? null;
    next.providerCode = report.providerCode ?? null;
    return { next, steps: ["failed"] };
  }
  next.sentAt ??= report.at;
  if (report.status === "delivered" || report.status === "read") {
    if (next.deliveredAt === null) {
      next.deliveredAt = report.at;
      steps.push("delivered");
    }
  }
  if (report.status === "read" && next.readAt === null) {
    next.readAt = report.at;
    steps.push("read");
  }
  const reached = next.readAt ? "read" : next.deliveredAt ? "delivered" : "sent";
  const status = current.status === null || rank[reached] > rank[current.status] ? reached : current.status;
  next.status = status;
  return { next, steps };
}

/** The event type of an announced step. */
export const deliveryEventType = (step: AnnouncedStep) => `notification.${step}` as const;

/**
 * The id of a step's event: the same for every attempt to announce that step of that notification,
 * so it is written (and delivered) at most once even if it were produced twice.
 */
export function deliveryEventId(notificationId: string, step: AnnouncedStep): string {
  return `evt_${createHash("sha256").update(`${notificationId}:${step}`).digest("hex").slice(0, 24)}`;
}

/** A notification as an event snapshot or a partner reads it: ids, states, codes and times only. */
export interface NotificationStatusView {
  notificationId: string;
  type: string;
  createdAt: Date;
  progress: DeliveryProgress;
}

const iso = (date: Date | null) => (date === null ? undefined : date.toISOString());

/** data.object of notification.delivered|read|failed: never the text or the phone number. */
export function deliveryEventObject(view: NotificationStatusView): Record<string, unknown> {
  const { progress } = view;
  const object: Record<string, unknown> = {
    notification_id: view.notificationId,
    type: view.type,
    status: progress.status,
    created_at: view.createdAt.toISOString(),
    accepted_at: iso(progress.acceptedAt),
    sent_at: iso(progress.sentAt),
    delivered_at: iso(progress.deliveredAt),
    read_at: iso(progress.readAt),
    failed_at: iso(progress.failedAt),
    reason_code: progress.failureCode ?? undefined,
  };
  return Object.fromEntries(Object.entries(object).filter(([, value]) => value !== undefined));
}

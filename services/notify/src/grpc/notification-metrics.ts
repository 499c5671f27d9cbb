import { Counter, Histogram, type Registry } from "prom-client";

/** What notify counts about notifications, on its /metrics. */
export interface NotificationMetrics {
  /**
   * outcome: sent, unknown, failed (the provider refused), refused (a precondition failed), paced
   * (over the number's throughput: nothing recorded).
   */
  notifications: Counter<"type" | "outcome">;
  /** One provider request, labelled by provider and outcome (sent, unknown, failed). */
  providerSeconds: Histogram<"provider" | "outcome">;
  /** Sends per statement of the send path (statement: record, outcome): NOTIFY_SEND_BATCH's gathering. */
  sendBatchSize: Histogram<"statement">;
}

export function createNotificationMetrics(registry: Registry): NotificationMetrics {
  return {
    notifications: new Counter({
      name: "notify_notifications_total",
      help: "Notification sends by type and outcome (sent, unknown, failed, refused, paced); replays are not counted.",
      labelNames: ["type", "outcome"],
      registers: [registry],
    }),
    providerSeconds: new Histogram({
      name: "notify_provider_request_duration_seconds",
      help: "Duration of one channel provider request, in seconds.",
      labelNames: ["provider", "outcome"],
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
      registers: [registry],
    }),
    sendBatchSize: new Histogram({
      name: "notify_send_batch_size",
      help: "Sends that shared one statement and commit of the send path, by statement (record, outcome).",
      labelNames: ["statement"],
      buckets: [1, 2, 4, 8, 16, 32, 64],
      registers: [registry],
    }),
  };
}

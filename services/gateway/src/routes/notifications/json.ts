import type { ConversationMessage, SendNotificationResponse } from "@platform/proto/notify/v1";
import type { NotificationRecord } from "@platform/proto/notify/v1/provider-callbacks";

export function sendResultToJson(response: SendNotificationResponse): Record<string, unknown> {
  return {
    notificationId: response.notificationId,
    state: response.state,
    type: response.type,
    createdAt: response.createdAt,
    idempotencyStatus: response.replayed ? "replayed" : "applied",
  };
}

export function messageToJson(message: ConversationMessage): Record<string, unknown> {
  return {
    id: message.id,
    // A customer's inbound keyword message (STOP, START) answers no notification.
    notificationId: message.notificationId || null,
    type: message.type,
    text: message.text,
    state: message.state,
    deliveryStatus: message.deliveryStatus === "" ? null : message.deliveryStatus,
    actor: {
      actorReference: message.actorReference,
      delegationReference: message.delegationReference ?? null,
    },
    createdAt: message.createdAt,
    updatedAt: message.updatedAt,
  };
}

const orNull = (value: string) => (value === "" ? null : value);

/** A notification as GET .../notifications/{id} answers it: ids, states, codes and times; never text or phone number. */
export function notificationToJson(record: NotificationRecord): Record<string, unknown> {
  return {
    notificationId: record.notificationId,
    type: record.type,
    state: record.state,
    deliveryStatus: orNull(record.deliveryStatus),
    reasonCode: orNull(record.reasonCode),
    createdAt: record.createdAt,
    updatedAt: record.updatedAt,
    acceptedAt: orNull(record.acceptedAt),
    sentAt: orNull(record.sentAt),
    deliveredAt: orNull(record.deliveredAt),
    readAt: orNull(record.readAt),
    failedAt: orNull(record.failedAt),
  };
}

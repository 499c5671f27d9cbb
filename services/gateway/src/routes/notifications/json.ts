import type { ConversationMessage, SendNotificationResponse } from "@platform/proto/notify/v1";

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
    actor: {
      actorReference: message.actorReference,
      delegationReference: message.delegationReference ?? null,
    },
    createdAt: message.createdAt,
    updatedAt: message.updatedAt,
  };
}

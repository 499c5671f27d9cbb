import type { ActivityItem, AttentionItem, WorkItem } from "@platform/proto/notify/v1/projections";

export const orNull = (value: string): string | null => (value === "" ? null : value);

export const workItemToJson = (item: WorkItem) => ({
  notificationId: item.notificationId,
  type: item.type,
  state: item.state,
  reasonCode: orNull(item.reasonCode),
  createdAt: item.createdAt,
  updatedAt: item.updatedAt,
});

export const attentionItemToJson = (item: AttentionItem) => ({
  id: item.id,
  kind: item.kind,
  subjectId: item.subjectId,
  reasonCode: orNull(item.reasonCode),
  cause: orNull(item.cause),
  openedAt: item.openedAt,
  eventId: item.eventId,
});

export const activityItemToJson = (item: ActivityItem) => ({
  eventId: item.eventId,
  type: item.type,
  occurredAt: item.occurredAt,
  subjectKind: orNull(item.subjectKind),
  subjectId: orNull(item.subjectId),
  reasonCode: orNull(item.reasonCode),
  state: orNull(item.state),
  actor: orNull(item.actor),
});

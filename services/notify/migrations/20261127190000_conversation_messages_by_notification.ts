import type { Knex } from "@platform/service-kit/postgres";

export const name = "20261127190000_conversation_messages_by_notification";

/**
 * A send's outcome updates its transcript entry by `notification_id` (db/notification-store.ts,
 * `notify_send_outcome`, and the provider's status callbacks), which had no index: every outcome
 * scanned the whole transcript (bench:growth, 3 million notifications: a send's p50 16.6 -> 516 ms).
 * Built concurrently (outside a transaction), so a running release keeps writing meanwhile.
 */
export const config = { transaction: false };

export async function up(db: Knex): Promise<void> {
  await db.raw(
    "create index concurrently if not exists conversation_messages_notification_idx on conversation_messages (notification_id)",
  );
}

export async function down(db: Knex): Promise<void> {
  await db.raw("drop index concurrently if exists conversation_messages_notification_idx");
}

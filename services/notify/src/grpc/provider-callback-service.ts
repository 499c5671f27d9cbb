import {
  NotificationStatusServiceService,
  ProviderCallbackServiceService,
  type NotificationRecord,
} from "@platform/proto/notify/v1/provider-callbacks";
import { NotFoundError } from "@platform/service-kit/errors";
import type { UnaryHandlers } from "@platform/service-kit/grpc-server";
import type { ProviderCallbackApplier } from "../callbacks/provider-callback-applier.js";
import type { NotificationStatusRow, ProviderCallbackStore } from "../db/provider-callback-store.js";
import { parseCallbackBody, ProviderCallbackInvalidError } from "../domain/provider-callback.js";
import { requireTenantId } from "../domain/tenant.js";

export class NotificationNotFoundError extends NotFoundError {
  override name = "NotificationNotFoundError";
  constructor() {
    super("notification.not_found", "no notification with this id exists for this tenant");
  }
}

const NOTIFICATION_ID = /^ntf_[0-9a-f]{24}$/;
const iso = (date: Date | null) => (date === null ? "" : date.toISOString());

export function toNotificationRecord(row: NotificationStatusRow): NotificationRecord {
  const { progress } = row;
  return {
    notificationId: row.notificationId,
    type: row.type,
    state: row.state,
    deliveryStatus: progress.status ?? "",
    reasonCode: row.reasonCode ?? "",
    createdAt: row.createdAt.toISOString(),
    updatedAt: row.updatedAt.toISOString(),
    acceptedAt: iso(progress.acceptedAt),
    sentAt: iso(progress.sentAt),
    deliveredAt: iso(progress.deliveredAt),
    readAt: iso(progress.readAt),
    failedAt: iso(progress.failedAt),
  };
}

/**
 * notify.v1.ProviderCallbackService: record a signed batch (one insert, answered once committed),
 * then apply it in the same call; a failure to apply is not the caller's: the batch is recorded and
 * the pass applies it later.
 */
export function createProviderCallbackService(deps: {
  store: ProviderCallbackStore;
  applier: ProviderCallbackApplier;
}): UnaryHandlers<typeof ProviderCallbackServiceService> {
  return {
    async recordProviderCallbacks(request, { logger }) {
      if (request.provider !== "whatsapp") {
        throw new ProviderCallbackInvalidError(
          `callbacks of provider ${JSON.stringify(request.provider)} are not taken`,
        );
      }
      parseCallbackBody(request.body);
      const recorded = await deps.store.record(request.provider, request.body);
      const applied = await deps.applier.apply(recorded.batchId);
      logger.info(
        { batchId: recorded.batchId, duplicate: recorded.duplicate, bytes: request.body.length, applied },
        "provider callback batch recorded",
      );
      return recorded;
    },
  };
}

/** notify.v1.NotificationStatusService: one notification's state and delivery status (never its text or recipient). */
export function createNotificationStatusService(deps: {
  store: ProviderCallbackStore;
}): UnaryHandlers<typeof NotificationStatusServiceService> {
  return {
    async getNotification(request) {
      const tenantId = requireTenantId(request.tenantId);
      if (!NOTIFICATION_ID.test(request.notificationId)) {
        // Not an id any notification can have: as unknown as a missing one (after the tenant check).
        await deps.store.getNotification(tenantId, "ntf_");
        throw new NotificationNotFoundError();
      }
      const row = await deps.store.getNotification(tenantId, request.notificationId);
      if (!row) throw new NotificationNotFoundError();
      return { notification: toNotificationRecord(row) };
    },
  };
}

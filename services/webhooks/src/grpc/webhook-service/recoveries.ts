/**
 * Recoveries: redrive an endpoint's failed deliveries since a time (or count them first with a
 * dry run), then follow the recovery's progress. Creating one runs once per Idempotency-Key; the
 * recovery worker does the redriving.
 */
import { WebhookServiceService } from "@platform/proto/webhooks/v1";
import { appendRecoveryStarted } from "../../db/endpoint-events.js";
import { countRecoverable, getRecovery, insertRecovery, listRecoveries } from "../../db/recovery-store.js";
import { actorOf } from "../../domain/actor.js";
import { newRecoveryId } from "../../domain/ids.js";
import { pageSize } from "../../domain/page-cursor.js";
import { EndpointPausedError, recoveryWindow } from "../../domain/recovery.js";
import { requireTenant, type WebhookContext, type WebhookHandlers } from "./context.js";
import { toProtoRecovery } from "./proto-mappers.js";

type RecoveryMethods = "recoverDeliveries" | "getRecovery" | "listRecoveries";

export function recoveryHandlers(ctx: WebhookContext): WebhookHandlers<RecoveryMethods> {
  const { endpoints, clock } = ctx;
  const { db } = ctx.deps;

  return {
    recoverDeliveries: ctx.declareMutation(WebhookServiceService.recoverDeliveries, {
      prepare: (request) => ({ actor: actorOf(request.actor) }),
      async effect(trx, { tenantId, request, prepared: { actor } }) {
        // Checked on the first execution only: a replay answers as the first did, even once its
        // since has left the retention.
        const window = recoveryWindow(
          { since: request.since, until: request.until },
          { now: clock(), retentionMs: ctx.retentionMs },
        );
        const endpoint = await endpoints.lock(trx, tenantId, request.endpointId);
        if (request.dryRun) {
          return { wouldRecover: String(await countRecoverable(trx, endpoint.id, window)), recovery: undefined };
        }
        // Recovering into a paused endpoint would only hold the deliveries: resume first.
        if (endpoint.paused) throw new EndpointPausedError();
        const recovery = await insertRecovery(trx, {
          id: newRecoveryId(),
          tenantId,
          endpointId: endpoint.id,
          window,
          actor,
          now: clock(),
        });
        return { wouldRecover: String(recovery.total), recovery };
      },
      // A dry run records nothing (and so kicks nothing).
      async record(trx, { recovery }, { call }) {
        if (!ctx.deps.events || !recovery) return 0;
        await appendRecoveryStarted(trx, ctx.deps.events.namespace, recovery, call.traceparent);
        return 1;
      },
      keep: ({ wouldRecover, recovery }) => ({
        wouldRecover,
        recovery: recovery ? toProtoRecovery(recovery) : undefined,
      }),
      log: ({ wouldRecover, recovery }, { tenantId, request }) =>
        recovery
          ? [
              { tenantId, endpointId: request.endpointId, recoveryId: recovery.id, total: wouldRecover },
              "recovery created",
            ]
          : undefined,
      answer: (kept, replayed) => ({ ...kept, replayed }),
    }),

    async getRecovery(request) {
      const tenantId = requireTenant(request.tenantId);
      await endpoints.get(db, tenantId, request.endpointId);
      const recovery = await getRecovery(db, tenantId, request.endpointId, request.recoveryId);
      return { recovery: toProtoRecovery(recovery) };
    },

    async listRecoveries(request) {
      const tenantId = requireTenant(request.tenantId);
      const endpoint = await endpoints.get(db, tenantId, request.endpointId);
      const recoveries = await listRecoveries(db, tenantId, endpoint.id, pageSize(request.limit));
      return { recoveries: recoveries.map(toProtoRecovery) };
    },
  };
}

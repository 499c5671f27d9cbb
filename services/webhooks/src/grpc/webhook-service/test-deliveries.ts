/**
 * A test delivery: a sample event of a catalog type, built now and delivered to one endpoint
 * (held while the endpoint is paused). It runs once per Idempotency-Key; the delivery is enqueued
 * after its commit.
 */
import { WebhookServiceService } from "@platform/proto/webhooks/v1";
import { actorOf } from "../../domain/actor.js";
import type { DeliveryJob } from "../../domain/delivery-job.js";
import { endpointActionTypes } from "../../domain/endpoint.js";
import { buildEnvelope, serializeEnvelope } from "../../domain/envelope.js";
import { newDeliveryId, newEventId } from "../../domain/ids.js";
import { buildTestEvent } from "../../domain/test-event.js";
import type { WebhookContext, WebhookHandlers } from "./context.js";
import { toProtoDelivery } from "./proto-mappers.js";

export function testDeliveryHandlers(ctx: WebhookContext): WebhookHandlers<"sendTestDelivery"> {
  const { clock } = ctx;
  return {
    sendTestDelivery: ctx.declareMutation(WebhookServiceService.sendTestDelivery, {
      prepare(request, _call, tenantId) {
        // Refuse an unknown or coming-soon type before anything is claimed.
        buildTestEvent({ id: newEventId(), type: request.eventType, tenant: tenantId, now: clock() });
        return { actor: actorOf(request.actor) };
      },
      async effect(trx, { tenantId, request, call }) {
        const endpoint = await ctx.endpoints.lock(trx, tenantId, request.endpointId);
        const now = clock();
        const event = buildTestEvent({ id: newEventId(), type: request.eventType, tenant: tenantId, now });
        const payload = serializeEnvelope(buildEnvelope(event, { apiVersion: endpoint.apiVersion, livemode: false }));
        const delivery = await ctx.ledger.insertTestDelivery(trx, {
          tenantId,
          endpointId: endpoint.id,
          event,
          deliveryId: newDeliveryId(now),
          payload: payload.toString("utf8"),
          held: endpoint.paused,
          now,
          traceparent: call.traceparent,
        });
        const jobs: DeliveryJob[] =
          delivery.status === "held" ? [] : [{ deliveryId: delivery.id, generation: delivery.generation }];
        return { endpointId: endpoint.id, delivery, jobs };
      },
      record: (trx, { endpointId, delivery }, input) =>
        ctx.recordAction(trx, input, endpointActionTypes.testDeliverySent, { endpointId, deliveryId: delivery.id }),
      keep: ({ delivery }) => ({ delivery: toProtoDelivery(delivery) }),
      log: ({ delivery }, { tenantId, request }) => [
        { tenantId, endpointId: request.endpointId, deliveryId: delivery.id },
        "test delivery created",
      ],
      afterCommit: ({ jobs }, { call }) => ctx.announce(jobs, call.logger),
      answer: ({ delivery }, replayed) => ({ delivery, replayed }),
    }),
  };
}

/**
 * A tenant's endpoints: create, read, list, update, delete, pause and resume. Reads answer with
 * the endpoint's health over the last 24 hours; every change runs once per Idempotency-Key and
 * records its fact for the activity feed in its transaction.
 */
import { WebhookServiceService, type Endpoint as ProtoEndpoint } from "@platform/proto/webhooks/v1";
import { appendEndpointResumed } from "../../db/endpoint-events.js";
import { withoutSecrets } from "../../db/endpoint-store.js";
import { actorOf } from "../../domain/actor.js";
import {
  endpointActionTypes,
  endpointRefusal,
  InvalidEndpointError,
  validateEndpointUpdate,
  validateNewEndpoint,
} from "../../domain/endpoint.js";
import { newEndpointId } from "../../domain/ids.js";
import { decodeCursor, encodeCursor, pageSize } from "../../domain/page-cursor.js";
import { requireTenant, type WebhookContext, type WebhookHandlers } from "./context.js";
import { toProtoEndpoint } from "./proto-mappers.js";
import { newSealedSecret, secretAnswer, type KeptSecretAnswer } from "./secrets.js";

type EndpointMethods =
  | "createEndpoint"
  | "getEndpoint"
  | "listEndpoints"
  | "updateEndpoint"
  | "deleteEndpoint"
  | "pauseEndpoint"
  | "resumeEndpoint";

/** Validation of endpoint input, with the narrowest code for a partner to branch on. */
function validated<T>(validate: () => T): T {
  try {
    return validate();
  } catch (error) {
    throw error instanceof InvalidEndpointError ? endpointRefusal(error) : error;
  }
}

export function endpointHandlers(ctx: WebhookContext): WebhookHandlers<EndpointMethods> {
  const { declareMutation, endpoints, clock } = ctx;

  async function checkTarget(url: string) {
    await ctx.deps.targets.resolve(new URL(url));
  }
  /** The endpoint's answer of a change: as it was committed, with its health read now. */
  const endpointAnswer = async (kept: { endpoint: ProtoEndpoint }, replayed: boolean) => ({
    endpoint: await ctx.oneWithHealth(kept.endpoint),
    replayed,
  });

  return {
    createEndpoint: declareMutation(WebhookServiceService.createEndpoint, {
      // The input and the target's host are checked before the key is claimed.
      async prepare(request) {
        const actor = actorOf(request.actor);
        const endpoint = validated(() =>
          validateNewEndpoint({
            url: request.url,
            description: request.description,
            eventTypes: request.eventTypes,
            rateLimit: request.rateLimit,
          }),
        );
        await checkTarget(endpoint.url);
        return { actor, endpoint };
      },
      async effect(trx, { tenantId, prepared: { endpoint } }) {
        const id = newEndpointId();
        const secretSealed = newSealedSecret(ctx, id);
        const created = await endpoints.insert(trx, { ...endpoint, id, tenantId, secretSealed, now: clock() });
        return { endpoint: toProtoEndpoint(withoutSecrets(created)), secretSealed } satisfies KeptSecretAnswer;
      },
      record: (trx, created, input) =>
        ctx.recordAction(trx, input, endpointActionTypes.created, { endpointId: created.endpoint.id }),
      log: (created, { tenantId }) => [{ tenantId, endpointId: created.endpoint.id }, "endpoint created"],
      answer: (kept, replayed) => secretAnswer(ctx, kept, replayed),
    }),

    async getEndpoint(request) {
      const endpoint = await endpoints.get(ctx.deps.db, requireTenant(request.tenantId), request.endpointId);
      return { endpoint: await ctx.oneWithHealth(toProtoEndpoint(withoutSecrets(endpoint))) };
    },

    async listEndpoints(request) {
      const tenantId = requireTenant(request.tenantId);
      const page = await endpoints.list(tenantId, {
        limit: pageSize(request.limit),
        afterSeq: decodeCursor(request.cursor),
      });
      return {
        endpoints: await ctx.withHealth(page.endpoints.map(toProtoEndpoint)),
        nextCursor: page.nextAfterSeq === undefined ? "" : encodeCursor(page.nextAfterSeq),
      };
    },

    updateEndpoint: declareMutation(WebhookServiceService.updateEndpoint, {
      // The changes and a new URL's host are checked before the key is claimed.
      async prepare(request) {
        const actor = actorOf(request.actor);
        if (request.clearRateLimit === true && request.rateLimit !== undefined) {
          throw new InvalidEndpointError([
            {
              code: "webhook.endpoint_invalid",
              field: "rateLimit",
              message: "give rate_limit or clear_rate_limit, not both",
            },
          ]);
        }
        const changes = validated(() =>
          validateEndpointUpdate({
            url: request.url,
            description: request.description,
            eventTypes: request.eventTypes?.eventTypes,
            rateLimit: request.clearRateLimit === true ? null : request.rateLimit,
          }),
        );
        if (changes.url !== undefined) await checkTarget(changes.url);
        return { actor, changes };
      },
      effect: (trx, { request, prepared: { changes } }) => ctx.change(trx, request, () => changes),
      record: (trx, updated, input) =>
        ctx.recordAction(trx, input, endpointActionTypes.updated, { endpointId: updated.id }),
      keep: (updated) => ({ endpoint: toProtoEndpoint(withoutSecrets(updated)) }),
      log: (_updated, { tenantId, request }) => [{ tenantId, endpointId: request.endpointId }, "endpoint updated"],
      answer: endpointAnswer,
    }),

    deleteEndpoint: declareMutation(WebhookServiceService.deleteEndpoint, {
      prepare: (request) => ({ actor: actorOf(request.actor) }),
      effect: (trx, { request }) => ctx.change(trx, request, (_endpoint, now) => ({ deletedAt: now })),
      record: (trx, deleted, input) =>
        ctx.recordAction(trx, input, endpointActionTypes.deleted, { endpointId: deleted.id }),
      keep: () => null,
      log: (_deleted, { tenantId, request }) => [{ tenantId, endpointId: request.endpointId }, "endpoint deleted"],
      answer: (_kept, replayed) => ({ replayed }),
    }),

    pauseEndpoint: declareMutation(WebhookServiceService.pauseEndpoint, {
      prepare: (request) => ({ actor: actorOf(request.actor) }),
      effect: (trx, { request }) => ctx.change(trx, request, () => ({ paused: true })),
      record: (trx, paused, input) =>
        ctx.recordAction(trx, input, endpointActionTypes.paused, { endpointId: paused.id }),
      keep: (paused) => ({ endpoint: toProtoEndpoint(withoutSecrets(paused)) }),
      log: (_paused, { tenantId, request }) => [{ tenantId, endpointId: request.endpointId }, "endpoint paused"],
      answer: endpointAnswer,
    }),

    resumeEndpoint: declareMutation(WebhookServiceService.resumeEndpoint, {
      prepare: (request) => ({ actor: actorOf(request.actor) }),
      async effect(trx, { request }) {
        const updated = await ctx.change(trx, request, () => ({ paused: false, attentionReason: null }));
        const released = await ctx.ledger.releaseHeld(trx, updated.id, clock());
        return { updated, released };
      },
      // The activity entry; and the attention item a dead letter opened closes with this commit.
      async record(trx, { updated }, { tenantId, prepared: { actor }, call }) {
        if (!ctx.deps.events) return 0;
        await appendEndpointResumed(trx, ctx.deps.events.namespace, {
          tenantId,
          endpointId: updated.id,
          actor,
          traceparent: call.traceparent,
        });
        return 1;
      },
      keep: ({ updated }) => ({ endpoint: toProtoEndpoint(withoutSecrets(updated)) }),
      log: ({ released }, { tenantId, request }) => [
        { tenantId, endpointId: request.endpointId, released: released.length },
        "endpoint resumed",
      ],
      afterCommit: ({ released }, { call }) => ctx.announce(released, call.logger),
      answer: endpointAnswer,
    }),
  };
}

/**
 * An endpoint's signing secret: made at creation (endpoints.ts), rotated here. The secret is
 * sealed under the endpoint id before it is stored, and a replay's answer is opened from the
 * sealed copy its idempotency record keeps.
 */
import { WebhookServiceService, type Endpoint as ProtoEndpoint } from "@platform/proto/webhooks/v1";
import { withoutSecrets } from "../../db/endpoint-store.js";
import { actorOf } from "../../domain/actor.js";
import { endpointActionTypes } from "../../domain/endpoint.js";
import { generateSigningSecret, openSecret, sealSecret } from "../../domain/secret-box.js";
import { rotationGraceMs } from "../../domain/signature.js";
import type { WebhookContext, WebhookHandlers } from "./context.js";
import { toProtoEndpoint } from "./proto-mappers.js";

/**
 * What an idempotency record keeps of an answer that shows a secret: the endpoint and the secret
 * SEALED (as the row holds it, under the endpoint id), never the plaintext. A replay opens it.
 */
export interface KeptSecretAnswer {
  endpoint: ProtoEndpoint;
  secretSealed: string;
}

/** A new signing secret for the endpoint, sealed under its id. */
export function newSealedSecret(ctx: WebhookContext, endpointId: string): string {
  return sealSecret(ctx.deps.keyRing, generateSigningSecret(), endpointId);
}

/** The answer that shows the secret: opened from what was kept, with the endpoint's health read now. */
export async function secretAnswer(ctx: WebhookContext, kept: KeptSecretAnswer, replayed: boolean) {
  const secret = openSecret(ctx.deps.keyRing, kept.secretSealed, kept.endpoint.id);
  return { endpoint: await ctx.oneWithHealth(kept.endpoint), secret, replayed };
}

export function secretHandlers(ctx: WebhookContext): WebhookHandlers<"rotateSecret"> {
  return {
    rotateSecret: ctx.declareMutation(WebhookServiceService.rotateSecret, {
      prepare: (request) => ({ actor: actorOf(request.actor) }),
      async effect(trx, { request }) {
        let secretSealed = "";
        const updated = await ctx.change(trx, request, (current, now) => {
          secretSealed = newSealedSecret(ctx, current.id);
          // The current secret (sealed under the same endpoint id) keeps signing for 24 hours.
          return {
            secretSealed,
            previousSecretSealed: current.secretSealed,
            previousSecretExpiresAt: new Date(now.getTime() + rotationGraceMs),
          };
        });
        return { endpoint: toProtoEndpoint(withoutSecrets(updated)), secretSealed } satisfies KeptSecretAnswer;
      },
      record: (trx, rotated, input) =>
        ctx.recordAction(trx, input, endpointActionTypes.secretRotated, { endpointId: rotated.endpoint.id }),
      log: (_rotated, { tenantId, request }) => [
        { tenantId, endpointId: request.endpointId },
        "endpoint secret rotated",
      ],
      answer: (kept, replayed) => secretAnswer(ctx, kept, replayed),
    }),
  };
}

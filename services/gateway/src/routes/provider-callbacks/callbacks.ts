import Router from "@koa/router";
import type { Context } from "koa";
import getRawBody from "raw-body";
import { ApiError, callService } from "../../http/api-error.js";
import type { ProblemCode } from "../../http/problem.js";
import { EXACT_ROUTES } from "../../http/router.js";
import { isValidHubSignature, sameSecret } from "../../domain/hub-signature.js";
import type { NotifyClient } from "../../grpc/notify-client.js";

/**
 * The one public path the WhatsApp Cloud API's app webhook calls (docs/notifications.md "Provider
 * callbacks"). It is not a partner operation: no API key, no rate limit by key, not in the OpenAPI
 * document; errors are problem+json with catalogue codes like the rest of /api.
 *   GET   the subscription handshake: hub.mode=subscribe and the configured hub.verify_token
 *         answer 200 with hub.challenge as text; anything else 403.
 *   POST  a notification batch: the raw body (at most WHATSAPP_CALLBACK_MAX_BYTES, else 413 before
 *         more is read), its X-Hub-Signature-256 checked over those bytes in constant time before
 *         anything parses them (401, nothing recorded), then handed to notify unparsed; 200 only
 *         once notify answers that it is recorded (503 otherwise: the provider retries, and a
 *         retried body is recorded once).
 */
export const WHATSAPP_CALLBACK_PATH = "/api/v1/providers/whatsapp/callbacks";

/** The codes only this path answers with (it is not a partner operation, so no operation of the document lists them). */
export const providerCallbackProblemCodes = [
  "provider.callback_invalid",
  "provider.callback_signature_invalid",
  "provider.callback_verify_token_invalid",
  "provider.callbacks_not_configured",
] as const satisfies readonly ProblemCode[];

export interface ProviderCallbackSettings {
  /** WHATSAPP_APP_SECRET: keys the X-Hub-Signature-256 HMAC. Secret. */
  appSecret: string | undefined;
  /** WHATSAPP_VERIFY_TOKEN: what the handshake's hub.verify_token must be. Secret. */
  verifyToken: string | undefined;
  /** WHATSAPP_CALLBACK_MAX_BYTES. */
  maxBytes: number;
}

function notConfigured(): never {
  throw new ApiError(404, "provider callbacks are not configured on this gateway", {
    code: "provider.callbacks_not_configured",
  });
}

async function readRawBody(ctx: Context, maxBytes: number): Promise<Buffer> {
  const tooLarge = (cause?: unknown) =>
    new ApiError(413, `the callback body must be at most ${maxBytes} bytes`, {
      code: "request.body_too_large",
      cause,
    });
  const declared = ctx.request.length;
  if (declared !== undefined && declared > maxBytes) throw tooLarge();
  const encoding = ctx.get("content-encoding").toLowerCase();
  if (encoding !== "" && encoding !== "identity") {
    throw new ApiError(415, `Content-Encoding ${encoding} is not supported`, {
      code: "request.unsupported_media_type",
    });
  }
  try {
    return await getRawBody(ctx.req, { limit: maxBytes, length: declared });
  } catch (error) {
    if ((error as { type?: string }).type === "entity.too.large") throw tooLarge(error);
    throw new ApiError(400, "the callback body could not be read", { code: "request.body_invalid", cause: error });
  }
}

export function providerCallbackRouter(settings: ProviderCallbackSettings, deps: { notify: NotifyClient }): Router {
  const router = new Router(EXACT_ROUTES);
  router.get(WHATSAPP_CALLBACK_PATH, (ctx) => {
    if (settings.verifyToken === undefined) notConfigured();
    const mode = ctx.query["hub.mode"];
    const token = ctx.query["hub.verify_token"];
    const challenge = ctx.query["hub.challenge"];
    if (mode !== "subscribe" || typeof token !== "string" || !sameSecret(token, settings.verifyToken)) {
      throw new ApiError(403, "hub.mode must be subscribe and hub.verify_token the configured verify token", {
        code: "provider.callback_verify_token_invalid",
      });
    }
    if (typeof challenge !== "string" || challenge === "" || challenge.length > 256) {
      throw new ApiError(400, "hub.challenge must be 1-256 characters", { code: "request.invalid" });
    }
    ctx.type = "text/plain";
    ctx.body = challenge;
  });
  router.post(WHATSAPP_CALLBACK_PATH, async (ctx) => {
    if (settings.appSecret === undefined) notConfigured();
    const body = await readRawBody(ctx, settings.maxBytes);
    if (!isValidHubSignature(settings.appSecret, body, ctx.get("x-hub-signature-256") || undefined)) {
      throw new ApiError(401, "X-Hub-Signature-256 is missing or does not match the body", {
        code: "provider.callback_signature_invalid",
      });
    }
    // A repeat is always safe (notify records a body once), so the call may go to another replica.
    const recorded = await callService(
      deps.notify.recordProviderCallbacks(
        { provider: "whatsapp", body },
        { requestId: ctx.state.requestId, traceparent: ctx.state.traceparent, repeatable: true },
      ),
    );
    ctx.state.log().info({ batchId: recorded.batchId, duplicate: recorded.duplicate }, "provider callbacks recorded");
    ctx.type = "text/plain";
    ctx.body = "ok";
  });
  return router;
}

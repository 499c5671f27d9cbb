import { callService } from "../../http/api-error.js";
import { readJsonBody } from "../../http/middleware/json-body.js";
import { callOptionsOf, idempotencyKeyOf, OTHER_SUCCESS, tenantIdOf, type TenantRoute } from "../../http/route.js";
import { channelToJson } from "./json.js";
import { parseChannelRequest } from "./shapes.js";

const tag = "channel";

/** The tenant's own WhatsApp number (owned by notify). */
export const channelRoutes: TenantRoute[] = [
  {
    surface: "tenant",
    operationId: "getChannel",
    method: "GET",
    path: "/api/v1/tenants/:tenantId/channel",
    scope: "tenant:read",
    mutation: false,
    poll: true,
    tag,
    summary: "Read the tenant's connected WhatsApp number.",
    description:
      "The WhatsApp Business Account id, phone number id, what the last check read of the number (display number, " +
      "verified name, quality rating, status), the templates per notification type, the throughput and the STOP / " +
      "START keywords. Never the access token. 404 channel.not_connected until a number is connected.",
    responseSchema: "Channel",
    problems: ["channel.not_connected"],
    async handle(ctx, deps) {
      const { channel } = await callService(deps.notify.readChannel({ tenantId: tenantIdOf(ctx) }, callOptionsOf(ctx)));
      ctx.body = channelToJson(channel);
    },
  },
  {
    surface: "tenant",
    operationId: "connectChannel",
    method: "PUT",
    path: "/api/v1/tenants/:tenantId/channel",
    scope: "tenant:manage",
    mutation: true,
    tag,
    summary: "Connect (or replace) the tenant's own WhatsApp number.",
    description:
      "Sends then go from this number with this token (sealed at rest; never returned or logged; connecting again " +
      "with a new token rotates it). Connecting reads the number from the Cloud API: the result is the " +
      "`messaging_channel` capability check (GET /capabilities), so a flagged, disconnected or restricted number, or " +
      "a token the Cloud API refuses, makes sends answer 409 partner.channel_not_ready until a check passes. With " +
      "`expectedVersion` (the tenant record's `version`) the change applies only to that version: 412 " +
      "tenant.version_mismatch otherwise. 201 when the tenant had no channel, 200 when one was replaced; the tenant's " +
      "version increases either way.",
    requestSchema: "ChannelRequest",
    successStatus: 200,
    otherSuccess: { status: 201, responseSchema: "Channel", description: "The tenant's first channel was connected." },
    responseSchema: "Channel",
    problems: ["channel.invalid", "channel.number_taken", "tenant.version_mismatch"],
    async handle(ctx, deps) {
      const body = parseChannelRequest(await readJsonBody(ctx));
      const idempotencyKey = idempotencyKeyOf(ctx);
      const response = await callService(
        deps.notify.connectChannel(
          {
            tenantId: tenantIdOf(ctx),
            idempotencyKey,
            wabaId: body.wabaId,
            phoneNumberId: body.phoneNumberId,
            accessToken: body.accessToken,
            templates: Object.entries(body.templates ?? {}).map(([type, t]) => ({
              type,
              name: t.name,
              language: t.language,
            })),
            messagesPerSecond: body.messagesPerSecond,
            stopKeywords: body.stopKeywords ?? [],
            startKeywords: body.startKeywords ?? [],
            expectedVersion: body.expectedVersion === undefined ? undefined : String(body.expectedVersion),
            actor: `api_key:${ctx.state.apiKey.id}`,
          },
          callOptionsOf(ctx),
        ),
        {
          idempotencyKey,
          howToCheck: "The channel may have been connected: read GET /channel before connecting again",
        },
      );
      if (response.replayed) ctx.set("Idempotent-Replayed", "true");
      ctx.body = channelToJson(response.channel);
      if (response.created) return OTHER_SUCCESS;
    },
  },
];

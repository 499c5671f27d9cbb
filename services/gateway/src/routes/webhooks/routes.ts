import type { Context } from "koa";
import { ApiError, callService } from "../../http/api-error.js";
import { readJsonBody } from "../../http/middleware/json-body.js";
import { pageParameters, pageQuery, tenantQuery } from "../../http/page-query.js";
import type { ProblemCode } from "../../http/problem.js";
import {
  idempotencyKeyOf,
  OTHER_SUCCESS,
  pathParam,
  callOptionsOf,
  tenantIdOf,
  type TenantRoute,
} from "../../http/route.js";
import { attemptToJson, deliveryToJson, endpointToJson, recoveryToJson, statsToJson } from "./json.js";
import {
  deliveryQueryParameters,
  deliveryIdParameter,
  messageLogQueryParameters,
  endpointIdParameter,
  expectedVersionParameter,
  recoveryIdParameter,
} from "./parameters.js";
import {
  deliveryQueryShape,
  expectedVersionQuery,
  messageLogQueryShape,
  parseEndpointUpdate,
  parseNewEndpoint,
  parseRecover,
  parseTestDelivery,
} from "./shapes.js";

/**
 * Who acts, for the tenant's activity feed: the API key (its id, never the key). The console
 * calls the webhooks service itself and names its signed-in user ("console:<email>").
 */
const actorOf = (ctx: Context) => `api_key:${ctx.state.apiKey.id}`;

/** What a mutation that failed without a definite answer tells its caller to check first. */
const mutation = (ctx: Context, howToCheck: string) => ({ idempotencyKey: idempotencyKeyOf(ctx), howToCheck });

const replayed = (ctx: Context, answer: { replayed: boolean }) => {
  if (answer.replayed) ctx.set("Idempotent-Replayed", "true");
};

const base = "/api/v1/tenants/:tenantId/webhooks";
const tag = "webhooks";
const scope = "webhook:manage" as const;

const filterCodes: ProblemCode[] = [
  "webhook.endpoint_invalid",
  "webhook.target_not_allowed",
  "webhook.event_type_unknown",
  "webhook.event_type_not_subscribable",
];

/**
 * The webhooks service keeps no tenant records: before it is called, notify confirms the tenant
 * exists, so a key's grant of a tenant that does not (or no longer) exist answers 404
 * tenant.not_found exactly as on every other route.
 */
function forExistingTenant(route: TenantRoute): TenantRoute {
  return {
    ...route,
    async handle(ctx, deps) {
      await callService(deps.notify.getTenant({ tenantId: tenantIdOf(ctx) }, callOptionsOf(ctx)));
      return route.handle(ctx, deps);
    },
  };
}

/** Webhook management (owned by the webhooks service): endpoints, secrets, the catalog, the delivery ledger. */
export const webhookRoutes: TenantRoute[] = (
  [
    // Before `/webhooks/:endpointId`, which would otherwise take "event-types" for an endpoint id.
    {
      surface: "tenant",
      operationId: "listWebhookEventTypes",
      method: "GET",
      path: `${base}/event-types`,
      scope,
      mutation: false,
      tag,
      summary: "List the event catalog, with each type's JSON Schema and example.",
      description:
        "All 20 event types: 15 subscribable, each with `schema` (the JSON Schema, draft 2020-12, of its whole " +
        "envelope as delivered for `currentApiVersion`, snapshot included) and `example` (an envelope valid against " +
        "it, the data a test delivery of the type carries), and 5 `coming_soon` (listed, not subscribable; " +
        "`schema` and `example` null). Emission status: `emitted`, `delivery_not_established` (subscribable; " +
        "delivery not established yet) or `coming_soon`. `currentApiVersion` is the payload version new endpoints " +
        "are pinned to.",
      responseSchema: "WebhookEventTypes",
      problems: [],
      async handle(ctx, deps) {
        const answer = await callService(deps.webhooks.listEventTypes({}, callOptionsOf(ctx)));
        ctx.body = {
          data: answer.eventTypes.map((t) => ({
            type: t.type,
            description: t.description,
            emission: t.emission,
            subscribable: t.subscribable,
            schema: t.schemaJson === "" ? null : (JSON.parse(t.schemaJson) as unknown),
            example: t.exampleJson === "" ? null : (JSON.parse(t.exampleJson) as unknown),
          })),
          currentApiVersion: answer.currentApiVersion,
        };
      },
    },
    {
      surface: "tenant",
      operationId: "createWebhookEndpoint",
      method: "POST",
      path: base,
      scope,
      mutation: true,
      tag,
      summary: "Create a webhook endpoint.",
      description:
        "An `https` URL whose host resolves to public addresses only, a description, and at least one event filter " +
        "(an exact subscribable type or a family wildcard such as `capability.*`). Answers 201 with the endpoint and " +
        "its signing `secret`, shown only here (a replay with the same Idempotency-Key shows it again). The endpoint " +
        "is pinned to the current API version. When every problem is an unknown (or every one a coming-soon) filter " +
        "the code says so; otherwise `webhook.endpoint_invalid` names every problem.",
      successStatus: 201,
      requestSchema: "WebhookEndpointRequest",
      responseSchema: "WebhookEndpointWithSecret",
      problems: filterCodes,
      async handle(ctx, deps) {
        const input = parseNewEndpoint(await readJsonBody(ctx));
        const answer = await callService(
          deps.webhooks.createEndpoint(
            { tenantId: tenantIdOf(ctx), ...input, idempotencyKey: idempotencyKeyOf(ctx), actor: actorOf(ctx) },
            callOptionsOf(ctx),
          ),
          mutation(ctx, "The endpoint may have been created: list the endpoints before creating it again"),
        );
        replayed(ctx, answer);
        ctx.body = { ...endpointToJson(answer.endpoint), secret: answer.secret };
      },
    },
    {
      surface: "tenant",
      operationId: "listWebhookEndpoints",
      method: "GET",
      path: base,
      scope,
      mutation: false,
      tag,
      summary: "List webhook endpoints.",
      description: "Newest first. Pass `nextCursor` back as `cursor` until it is null. Secrets are never listed.",
      parameters: pageParameters,
      responseSchema: "WebhookEndpointPage",
      problems: [],
      async handle(ctx, deps) {
        const answer = await callService(
          deps.webhooks.listEndpoints({ tenantId: tenantIdOf(ctx), ...pageQuery(ctx) }, callOptionsOf(ctx)),
        );
        ctx.body = {
          data: answer.endpoints.map(endpointToJson),
          nextCursor: answer.nextCursor === "" ? null : answer.nextCursor,
        };
      },
    },
    // Before `/webhooks/:endpointId`, which would otherwise take "deliveries" for an endpoint id.
    {
      surface: "tenant",
      operationId: "listWebhookMessages",
      method: "GET",
      path: `${base}/deliveries`,
      scope,
      mutation: false,
      tag,
      summary: "The message log: the deliveries of all the tenant's endpoints.",
      description:
        "Newest first across every endpoint that is not deleted (each delivery names its `endpointId`), optionally " +
        "only one `status`, one exact `eventType`, one `eventId`, and those created in [`createdAfter`, " +
        "`createdBefore`). Pass `nextCursor` back as `cursor`, with the same filters, until it is null.",
      parameters: messageLogQueryParameters,
      responseSchema: "WebhookDeliveryPage",
      problems: [],
      async handle(ctx, deps) {
        const query = tenantQuery(ctx, messageLogQueryShape);
        // Compared as instants: both carry a zone.
        if (
          query.createdAfter &&
          query.createdBefore &&
          new Date(query.createdAfter) >= new Date(query.createdBefore)
        ) {
          throw new ApiError(400, "createdAfter must be before createdBefore", { code: "request.invalid" });
        }
        const answer = await callService(
          deps.webhooks.listDeliveries(
            {
              tenantId: tenantIdOf(ctx),
              endpointId: "",
              limit: query.limit,
              cursor: query.cursor,
              status: query.status ?? "",
              eventType: query.eventType ?? "",
              eventId: query.eventId ?? "",
              createdAfter: query.createdAfter ?? "",
              createdBefore: query.createdBefore ?? "",
            },
            callOptionsOf(ctx),
          ),
        );
        ctx.body = {
          data: answer.deliveries.map(deliveryToJson),
          nextCursor: answer.nextCursor === "" ? null : answer.nextCursor,
        };
      },
    },
    {
      surface: "tenant",
      operationId: "getWebhookEndpoint",
      method: "GET",
      path: `${base}/:endpointId`,
      scope,
      mutation: false,
      tag,
      summary: "Read a webhook endpoint.",
      description: "The endpoint with its `version`; never its secret.",
      parameters: [endpointIdParameter],
      responseSchema: "WebhookEndpoint",
      problems: ["webhook.endpoint_not_found"],
      async handle(ctx, deps) {
        const answer = await callService(
          deps.webhooks.getEndpoint(
            { tenantId: tenantIdOf(ctx), endpointId: pathParam(ctx, "endpointId") },
            callOptionsOf(ctx),
          ),
        );
        ctx.body = endpointToJson(answer.endpoint);
      },
    },
    {
      surface: "tenant",
      operationId: "updateWebhookEndpoint",
      method: "PATCH",
      path: `${base}/:endpointId`,
      scope,
      mutation: true,
      tag,
      summary: "Change a webhook endpoint's URL, description or event filters.",
      description:
        "Only the members given change (at least one of `url`, `description`, `eventTypes`); the pinned API version " +
        "never does. With `expectedVersion` the change applies only if the endpoint is still at that version " +
        "(else 412 `webhook.version_mismatch`). A new URL's host is checked as at creation.",
      parameters: [endpointIdParameter],
      requestSchema: "WebhookEndpointUpdate",
      responseSchema: "WebhookEndpoint",
      problems: [...filterCodes, "webhook.endpoint_not_found", "webhook.version_mismatch"],
      async handle(ctx, deps) {
        const changes = parseEndpointUpdate(await readJsonBody(ctx));
        const answer = await callService(
          deps.webhooks.updateEndpoint(
            {
              tenantId: tenantIdOf(ctx),
              endpointId: pathParam(ctx, "endpointId"),
              ...changes,
              idempotencyKey: idempotencyKeyOf(ctx),
              actor: actorOf(ctx),
            },
            callOptionsOf(ctx),
          ),
          mutation(ctx, "The endpoint may have changed: read it before changing it again"),
        );
        replayed(ctx, answer);
        ctx.body = endpointToJson(answer.endpoint);
      },
    },
    {
      surface: "tenant",
      operationId: "deleteWebhookEndpoint",
      method: "DELETE",
      path: `${base}/:endpointId`,
      scope,
      mutation: true,
      tag,
      summary: "Delete a webhook endpoint.",
      description:
        "Answers 204; the endpoint then receives nothing and is not found. Its deliveries stay in the ledger.",
      parameters: [endpointIdParameter, expectedVersionParameter],
      successStatus: 204,
      problems: ["webhook.endpoint_not_found", "webhook.version_mismatch"],
      async handle(ctx, deps) {
        const answer = await callService(
          deps.webhooks.deleteEndpoint(
            {
              tenantId: tenantIdOf(ctx),
              endpointId: pathParam(ctx, "endpointId"),
              expectedVersion: expectedVersionQuery(ctx),
              idempotencyKey: idempotencyKeyOf(ctx),
              actor: actorOf(ctx),
            },
            callOptionsOf(ctx),
          ),
          mutation(ctx, "The endpoint may have been deleted: read it before deleting it again"),
        );
        replayed(ctx, answer);
      },
    },
    ...(
      [
        [
          "pause",
          "pauseWebhookEndpoint",
          "Pause a webhook endpoint.",
          "New deliveries are held, not dropped, until the endpoint is resumed.",
        ],
        [
          "resume",
          "resumeWebhookEndpoint",
          "Resume a webhook endpoint.",
          "Clears `attentionReason` and releases every held delivery: each is due at once, through the same retries.",
        ],
      ] as const
    ).map(([action, operationId, summary, description]): TenantRoute => ({
      surface: "tenant",
      operationId,
      method: "POST",
      path: `${base}/:endpointId/${action}`,
      scope,
      mutation: true,
      tag,
      summary,
      description: `${description} Bumps \`version\`.`,
      parameters: [endpointIdParameter, expectedVersionParameter],
      responseSchema: "WebhookEndpoint",
      problems: ["webhook.endpoint_not_found", "webhook.version_mismatch"],
      async handle(ctx, deps) {
        const request = {
          tenantId: tenantIdOf(ctx),
          endpointId: pathParam(ctx, "endpointId"),
          expectedVersion: expectedVersionQuery(ctx),
          idempotencyKey: idempotencyKeyOf(ctx),
          actor: actorOf(ctx),
        };
        const howToCheck = `The endpoint may have been ${action}d: read it before trying again`;
        const answer = await callService(
          action === "pause"
            ? deps.webhooks.pauseEndpoint(request, callOptionsOf(ctx))
            : deps.webhooks.resumeEndpoint(request, callOptionsOf(ctx)),
          mutation(ctx, howToCheck),
        );
        replayed(ctx, answer);
        ctx.body = endpointToJson(answer.endpoint);
      },
    })),
    {
      surface: "tenant",
      operationId: "rotateWebhookSecret",
      method: "POST",
      path: `${base}/:endpointId/rotate-secret`,
      scope,
      mutation: true,
      tag,
      summary: "Rotate a webhook endpoint's signing secret.",
      description:
        "Answers the endpoint and the new `secret`, shown only here. For 24 hours (until " +
        "`previousSecretExpiresAt`) deliveries carry a second signature made with the previous secret.",
      parameters: [endpointIdParameter, expectedVersionParameter],
      responseSchema: "WebhookEndpointWithSecret",
      problems: ["webhook.endpoint_not_found", "webhook.version_mismatch"],
      async handle(ctx, deps) {
        const answer = await callService(
          deps.webhooks.rotateSecret(
            {
              tenantId: tenantIdOf(ctx),
              endpointId: pathParam(ctx, "endpointId"),
              expectedVersion: expectedVersionQuery(ctx),
              idempotencyKey: idempotencyKeyOf(ctx),
              actor: actorOf(ctx),
            },
            callOptionsOf(ctx),
          ),
          mutation(ctx, "The secret may have been rotated: repeat with the same Idempotency-Key to see the new one"),
        );
        replayed(ctx, answer);
        ctx.body = { ...endpointToJson(answer.endpoint), secret: answer.secret };
      },
    },
    {
      surface: "tenant",
      operationId: "listWebhookDeliveries",
      method: "GET",
      path: `${base}/:endpointId/deliveries`,
      scope,
      mutation: false,
      tag,
      summary: "List an endpoint's deliveries.",
      description:
        "Newest first, optionally only one `status`, one exact `eventType` or one `eventId`. Pass `nextCursor` back " +
        "as `cursor` until it is null.",
      parameters: [endpointIdParameter, ...deliveryQueryParameters],
      responseSchema: "WebhookDeliveryPage",
      problems: ["webhook.endpoint_not_found"],
      async handle(ctx, deps) {
        const { limit, cursor, status, eventType, eventId } = tenantQuery(ctx, deliveryQueryShape);
        const answer = await callService(
          deps.webhooks.listDeliveries(
            {
              tenantId: tenantIdOf(ctx),
              endpointId: pathParam(ctx, "endpointId"),
              limit,
              cursor,
              status: status ?? "",
              eventType: eventType ?? "",
              eventId: eventId ?? "",
              createdAfter: "",
              createdBefore: "",
            },
            callOptionsOf(ctx),
          ),
        );
        ctx.body = {
          data: answer.deliveries.map(deliveryToJson),
          nextCursor: answer.nextCursor === "" ? null : answer.nextCursor,
        };
      },
    },
    {
      surface: "tenant",
      operationId: "getWebhookDelivery",
      method: "GET",
      path: `${base}/:endpointId/deliveries/:deliveryId`,
      scope,
      mutation: false,
      tag,
      summary: "Inspect a delivery.",
      description:
        "The delivery, every attempt oldest first in `attemptHistory` (the receiver's first 4 KiB as UTF-8 text), and " +
        "`payload`: the exact request body sent.",
      parameters: [endpointIdParameter, deliveryIdParameter],
      responseSchema: "WebhookDeliveryDetail",
      problems: ["webhook.endpoint_not_found", "webhook.delivery_not_found"],
      async handle(ctx, deps) {
        const answer = await callService(
          deps.webhooks.getDelivery(
            {
              tenantId: tenantIdOf(ctx),
              endpointId: pathParam(ctx, "endpointId"),
              deliveryId: pathParam(ctx, "deliveryId"),
            },
            callOptionsOf(ctx),
          ),
        );
        ctx.body = {
          ...deliveryToJson(answer.delivery),
          attemptHistory: answer.attempts.map(attemptToJson),
          payload: answer.payload,
        };
      },
    },
    {
      surface: "tenant",
      operationId: "redriveWebhookDelivery",
      method: "POST",
      path: `${base}/:endpointId/deliveries/:deliveryId/redrive`,
      scope,
      mutation: true,
      tag,
      summary: "Redrive a failed or dead-lettered delivery, or resend a succeeded one.",
      description:
        "Within 30 days of the event: a fresh run of attempts through the same pipeline, due now (held while the " +
        "endpoint is paused), with the same event id and payload. `attemptsTotal` keeps counting. A delivery still " +
        "on its way (`pending`, `held`) answers 409 `webhook.delivery_not_redrivable`.",
      parameters: [endpointIdParameter, deliveryIdParameter],
      responseSchema: "WebhookDelivery",
      problems: [
        "webhook.endpoint_not_found",
        "webhook.delivery_not_found",
        "webhook.delivery_not_redrivable",
        "webhook.redrive_window_closed",
      ],
      async handle(ctx, deps) {
        const answer = await callService(
          deps.webhooks.redriveDelivery(
            {
              tenantId: tenantIdOf(ctx),
              endpointId: pathParam(ctx, "endpointId"),
              deliveryId: pathParam(ctx, "deliveryId"),
              idempotencyKey: idempotencyKeyOf(ctx),
              actor: actorOf(ctx),
            },
            callOptionsOf(ctx),
          ),
          mutation(ctx, "The delivery may have been redriven: inspect it before redriving it again"),
        );
        replayed(ctx, answer);
        ctx.body = deliveryToJson(answer.delivery);
      },
    },
    {
      surface: "tenant",
      operationId: "getWebhookEndpointStats",
      method: "GET",
      path: `${base}/:endpointId/stats`,
      scope,
      mutation: false,
      tag,
      summary: "Delivery statistics of an endpoint over the last 24 hours.",
      description:
        "Deliveries created in the window by current status; attempts made in it, the share that succeeded, and " +
        "attempt latency percentiles (null when no attempt was made).",
      parameters: [endpointIdParameter],
      responseSchema: "WebhookEndpointStats",
      problems: ["webhook.endpoint_not_found"],
      async handle(ctx, deps) {
        const answer = await callService(
          deps.webhooks.getEndpointStats(
            { tenantId: tenantIdOf(ctx), endpointId: pathParam(ctx, "endpointId") },
            callOptionsOf(ctx),
          ),
        );
        ctx.body = statsToJson(answer);
      },
    },
    {
      surface: "tenant",
      operationId: "sendWebhookTestDelivery",
      method: "POST",
      path: `${base}/:endpointId/test`,
      scope,
      mutation: true,
      tag,
      summary: "Send a test delivery.",
      description:
        "A synthetic event of the chosen subscribable type (`livemode` false), signed with the endpoint's real " +
        "secret and delivered through the same pipeline and retries. Answers 202 with the delivery; follow it " +
        "in the ledger.",
      parameters: [endpointIdParameter],
      successStatus: 202,
      requestSchema: "WebhookTestDeliveryRequest",
      responseSchema: "WebhookDelivery",
      problems: ["webhook.endpoint_not_found", "webhook.event_type_unknown", "webhook.event_type_not_subscribable"],
      async handle(ctx, deps) {
        const eventType = parseTestDelivery(await readJsonBody(ctx));
        const answer = await callService(
          deps.webhooks.sendTestDelivery(
            {
              tenantId: tenantIdOf(ctx),
              endpointId: pathParam(ctx, "endpointId"),
              eventType,
              idempotencyKey: idempotencyKeyOf(ctx),
              actor: actorOf(ctx),
            },
            callOptionsOf(ctx),
          ),
          mutation(ctx, "The test delivery may have been created: list the deliveries before sending another"),
        );
        replayed(ctx, answer);
        ctx.body = deliveryToJson(answer.delivery);
      },
    },
    {
      surface: "tenant",
      operationId: "recoverWebhookEndpoint",
      method: "POST",
      path: `${base}/:endpointId/recover`,
      scope,
      mutation: true,
      tag,
      summary: "Recover an endpoint: redrive its failed and dead-lettered deliveries since a time.",
      description:
        "Every delivery of the endpoint created in [`since`, `until`) that is `dead_lettered` or `awaiting_retry` " +
        "is redriven as the redrive operation does it (a fresh run, signed at send time), one by one at the " +
        "platform's recovery rate (10 a second by default), by a durable job that survives restarts. Answers 202 " +
        "with the recovery; follow it at `.../recoveries/{recoveryId}`. With `dryRun` it only counts: 200 " +
        "`{wouldRecover}`. `since` may not be in the future nor older than the 30-day retention (400 " +
        "`webhook.recovery_window_invalid`). A paused endpoint is refused (409 `webhook.endpoint_paused`: resume " +
        "it first, which releases its held deliveries); so is a second recovery while one runs (409 " +
        "`webhook.recovery_in_progress`).",
      parameters: [endpointIdParameter],
      successStatus: 202,
      otherSuccess: { status: 200, responseSchema: "WebhookRecoveryDryRun", description: "A dry run's count." },
      requestSchema: "WebhookRecoveryRequest",
      responseSchema: "WebhookRecovery",
      problems: [
        "webhook.endpoint_not_found",
        "webhook.recovery_window_invalid",
        "webhook.endpoint_paused",
        "webhook.recovery_in_progress",
      ],
      async handle(ctx, deps) {
        const input = parseRecover(await readJsonBody(ctx));
        const answer = await callService(
          deps.webhooks.recoverDeliveries(
            {
              tenantId: tenantIdOf(ctx),
              endpointId: pathParam(ctx, "endpointId"),
              ...input,
              idempotencyKey: idempotencyKeyOf(ctx),
              actor: actorOf(ctx),
            },
            callOptionsOf(ctx),
          ),
          mutation(ctx, "The recovery may have been created: repeat with the same Idempotency-Key to see it"),
        );
        replayed(ctx, answer);
        if (input.dryRun) {
          ctx.body = { wouldRecover: Number(answer.wouldRecover) };
          return OTHER_SUCCESS;
        }
        ctx.body = recoveryToJson(answer.recovery);
      },
    },
    {
      surface: "tenant",
      operationId: "getWebhookRecovery",
      method: "GET",
      path: `${base}/:endpointId/recoveries/:recoveryId`,
      scope,
      mutation: false,
      tag,
      summary: "Read a recovery's progress.",
      description: "`state`, `total` and `done` (`redriven` + `skipped`), with its times.",
      parameters: [endpointIdParameter, recoveryIdParameter],
      responseSchema: "WebhookRecovery",
      problems: ["webhook.endpoint_not_found", "webhook.recovery_not_found"],
      async handle(ctx, deps) {
        const answer = await callService(
          deps.webhooks.getRecovery(
            {
              tenantId: tenantIdOf(ctx),
              endpointId: pathParam(ctx, "endpointId"),
              recoveryId: pathParam(ctx, "recoveryId"),
            },
            callOptionsOf(ctx),
          ),
        );
        ctx.body = recoveryToJson(answer.recovery);
      },
    },
  ] satisfies TenantRoute[]
).map(forExistingTenant);

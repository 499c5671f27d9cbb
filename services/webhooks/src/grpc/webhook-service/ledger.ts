/**
 * An endpoint's delivery ledger: list and inspect its deliveries (or the tenant's message log
 * across its endpoints), redrive one (a succeeded one included: a resend), and its stats over
 * the last 24 hours. A redrive runs once per Idempotency-Key; the delivery it makes due is
 * enqueued after its commit.
 */
import { WebhookServiceService } from "@platform/proto/webhooks/v1";
import { InvalidArgumentError } from "@platform/service-kit/errors";
import { deliveryState } from "../../db/ledger-store.js";
import { actorOf } from "../../domain/actor.js";
import type { DeliveryJob } from "../../domain/delivery-job.js";
import { deliveryStatuses, redrive, type DeliveryStatus } from "../../domain/delivery-state.js";
import { endpointActionTypes } from "../../domain/endpoint.js";
import { decodeCursor, encodeCursor, pageSize } from "../../domain/page-cursor.js";
import { requireTenant, statsWindowMs, type WebhookContext, type WebhookHandlers } from "./context.js";
import { toProtoAttempt, toProtoDelivery } from "./proto-mappers.js";

type LedgerMethods = "listDeliveries" | "getDelivery" | "redriveDelivery" | "getEndpointStats";

function statusFilter(status: string): DeliveryStatus | undefined {
  if (status === "") return undefined;
  if (!(deliveryStatuses as readonly string[]).includes(status)) {
    throw new InvalidArgumentError("request.invalid", `status must be one of ${deliveryStatuses.join(", ")}`);
  }
  return status as DeliveryStatus;
}

/** A `created_after` / `created_before` bound: RFC 3339 with a zone, or "" for none. */
function createdBound(text: string, field: string): Date | undefined {
  if (text === "") return undefined;
  const date = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:\d{2})$/i.test(text)
    ? new Date(text)
    : undefined;
  if (date === undefined || Number.isNaN(date.getTime())) {
    throw new InvalidArgumentError(
      "request.invalid",
      `${field} must be an RFC 3339 timestamp with a zone, e.g. 2026-07-01T10:00:00Z`,
    );
  }
  return date;
}

export function ledgerHandlers(ctx: WebhookContext): WebhookHandlers<LedgerMethods> {
  const { endpoints, ledger, clock } = ctx;
  const { db } = ctx.deps;

  return {
    async listDeliveries(request) {
      const tenantId = requireTenant(request.tenantId);
      const limit = pageSize(request.limit);
      const afterSeq = decodeCursor(request.cursor);
      const status = statusFilter(request.status);
      const createdAfter = createdBound(request.createdAfter, "created_after");
      const createdBefore = createdBound(request.createdBefore, "created_before");
      if (createdAfter && createdBefore && createdAfter >= createdBefore) {
        throw new InvalidArgumentError("request.invalid", "created_after must be before created_before");
      }
      // No endpoint: the message log across the tenant's endpoints.
      const endpointId = request.endpointId === "" ? undefined : request.endpointId;
      if (endpointId !== undefined) await endpoints.get(db, tenantId, endpointId);
      const page = await ledger.list(tenantId, endpointId, {
        limit,
        afterSeq,
        status,
        eventType: request.eventType === "" ? undefined : request.eventType,
        eventId: request.eventId === "" ? undefined : request.eventId,
        createdAfter,
        createdBefore,
      });
      return {
        deliveries: page.deliveries.map(toProtoDelivery),
        nextCursor: page.nextAfterSeq === undefined ? "" : encodeCursor(page.nextAfterSeq),
      };
    },

    async getDelivery(request) {
      const tenantId = requireTenant(request.tenantId);
      await endpoints.get(db, tenantId, request.endpointId);
      const { delivery, attempts, payload } = await ledger.inspect(tenantId, request.endpointId, request.deliveryId);
      return { delivery: toProtoDelivery(delivery), attempts: attempts.map(toProtoAttempt), payload };
    },

    redriveDelivery: ctx.declareMutation(WebhookServiceService.redriveDelivery, {
      prepare: (request) => ({ actor: actorOf(request.actor) }),
      async effect(trx, { tenantId, request }) {
        const endpoint = await endpoints.lock(trx, tenantId, request.endpointId);
        const delivery = await ledger.lock(trx, tenantId, endpoint.id, request.deliveryId);
        const now = clock();
        const state = redrive(deliveryState(delivery), {
          now,
          endpointPaused: endpoint.paused,
          windowMs: ctx.retentionMs,
        });
        const restarted = await ledger.restart(trx, delivery.id, state, now);
        const jobs: DeliveryJob[] =
          restarted.status === "held" ? [] : [{ deliveryId: restarted.id, generation: restarted.generation }];
        return { endpointId: endpoint.id, restarted, jobs };
      },
      record: (trx, { endpointId, restarted }, input) =>
        ctx.recordAction(trx, input, endpointActionTypes.deliveryRedriven, { endpointId, deliveryId: restarted.id }),
      keep: ({ restarted }) => ({ delivery: toProtoDelivery(restarted) }),
      log: (_redriven, { tenantId, request }) => [
        { tenantId, endpointId: request.endpointId, deliveryId: request.deliveryId },
        "delivery redriven",
      ],
      afterCommit: ({ jobs }, { call }) => ctx.announce(jobs, call.logger),
      answer: ({ delivery }, replayed) => ({ delivery, replayed }),
    }),

    async getEndpointStats(request) {
      const tenantId = requireTenant(request.tenantId);
      const endpoint = await endpoints.get(db, tenantId, request.endpointId);
      const until = clock();
      const since = new Date(until.getTime() - statsWindowMs);
      const [stats, hourly] = await Promise.all([
        ledger.stats(endpoint.id, since, until),
        ledger.hourly(endpoint.id, since, until),
      ]);
      return {
        endpointId: endpoint.id,
        windowStart: since.toISOString(),
        windowEnd: until.toISOString(),
        pending: String(stats.byStatus.pending),
        succeeded: String(stats.byStatus.succeeded),
        awaitingRetry: String(stats.byStatus.awaiting_retry),
        deadLettered: String(stats.byStatus.dead_lettered),
        held: String(stats.byStatus.held),
        attempts: String(stats.attempts),
        attemptsSucceeded: String(stats.attemptsSucceeded),
        successRate: stats.attempts > 0 ? stats.attemptsSucceeded / stats.attempts : undefined,
        latencyP50Ms: stats.latencyMs?.p50,
        latencyP95Ms: stats.latencyMs?.p95,
        latencyP99Ms: stats.latencyMs?.p99,
        hourly: hourly.map((bucket) => ({
          start: bucket.start.toISOString(),
          succeeded: String(bucket.succeeded),
          failed: String(bucket.failed),
        })),
      };
    },
  };
}

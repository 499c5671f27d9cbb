import type { Attempt, Delivery, Endpoint, GetEndpointStatsResponse, Recovery } from "@platform/proto/webhooks/v1";
import { ApiError } from "../../http/api-error.js";

export function endpointToJson(endpoint: Endpoint | undefined): Record<string, unknown> {
  if (!endpoint) throw new ApiError(500, "webhooks answered without an endpoint");
  return {
    id: endpoint.id,
    url: endpoint.url,
    description: endpoint.description,
    eventTypes: endpoint.eventTypes,
    apiVersion: endpoint.apiVersion,
    paused: endpoint.paused,
    attentionReason: endpoint.attentionReason ?? null,
    version: Number(endpoint.version),
    createdAt: endpoint.createdAt,
    updatedAt: endpoint.updatedAt,
    previousSecretExpiresAt: endpoint.previousSecretExpiresAt ?? null,
    health: endpoint.health,
    successRate24h: endpoint.successRate24h ?? null,
    attempts24h: Number(endpoint.attempts24h),
    attentionCause: endpoint.attentionCause ?? null,
    attentionSince: endpoint.attentionSince ?? null,
    rateLimit: endpoint.rateLimit ?? null,
  };
}

export function deliveryToJson(delivery: Delivery | undefined): Record<string, unknown> {
  if (!delivery) throw new ApiError(500, "webhooks answered without a delivery");
  return {
    id: delivery.id,
    endpointId: delivery.endpointId,
    eventId: delivery.eventId,
    eventType: delivery.eventType,
    status: delivery.status,
    attempts: delivery.attempts,
    attemptsTotal: delivery.attemptsTotal,
    nextAttemptAt: delivery.nextAttemptAt ?? null,
    livemode: delivery.livemode,
    lastStatusCode: delivery.lastStatusCode ?? null,
    lastError: delivery.lastError ?? null,
    createdAt: delivery.createdAt,
    updatedAt: delivery.updatedAt,
  };
}

export function attemptToJson(attempt: Attempt): Record<string, unknown> {
  return {
    number: attempt.number,
    attemptedAt: attempt.attemptedAt,
    durationMs: attempt.durationMs,
    succeeded: attempt.succeeded,
    statusCode: attempt.statusCode ?? null,
    error: attempt.error ?? null,
    // The receiver's bytes as UTF-8 text; anything that is not UTF-8 shows as U+FFFD.
    responseBody: Buffer.from(attempt.responseBody).toString("utf8"),
    responseBodyTruncated: attempt.responseBodyTruncated,
    errorClass: attempt.errorClass === "" ? null : attempt.errorClass,
  };
}

export function statsToJson(stats: GetEndpointStatsResponse): Record<string, unknown> {
  return {
    endpointId: stats.endpointId,
    windowStart: stats.windowStart,
    windowEnd: stats.windowEnd,
    deliveries: {
      pending: Number(stats.pending),
      succeeded: Number(stats.succeeded),
      awaitingRetry: Number(stats.awaitingRetry),
      deadLettered: Number(stats.deadLettered),
      held: Number(stats.held),
    },
    attempts: Number(stats.attempts),
    attemptsSucceeded: Number(stats.attemptsSucceeded),
    successRate: stats.successRate ?? null,
    latencyMs:
      stats.latencyP50Ms === undefined
        ? null
        : { p50: stats.latencyP50Ms, p95: stats.latencyP95Ms ?? null, p99: stats.latencyP99Ms ?? null },
    hourly: stats.hourly.map((bucket) => ({
      start: bucket.start,
      succeeded: Number(bucket.succeeded),
      failed: Number(bucket.failed),
    })),
  };
}

export function recoveryToJson(recovery: Recovery | undefined): Record<string, unknown> {
  if (!recovery) throw new ApiError(500, "webhooks answered without a recovery");
  return {
    id: recovery.id,
    endpointId: recovery.endpointId,
    since: recovery.since,
    until: recovery.until ?? null,
    state: recovery.state,
    total: Number(recovery.total),
    done: Number(recovery.done),
    redriven: Number(recovery.redriven),
    skipped: Number(recovery.skipped),
    failureCode: recovery.failureCode ?? null,
    actor: recovery.actor ?? null,
    createdAt: recovery.createdAt,
    startedAt: recovery.startedAt ?? null,
    finishedAt: recovery.finishedAt ?? null,
    updatedAt: recovery.updatedAt,
  };
}

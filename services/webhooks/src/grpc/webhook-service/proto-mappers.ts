/** The ledger's and the stores' records as webhooks.v1 messages: timestamps as ISO strings, counts as strings. */
import type {
  Attempt as ProtoAttempt,
  Delivery as ProtoDelivery,
  Endpoint as ProtoEndpoint,
  Recovery as ProtoRecovery,
} from "@platform/proto/webhooks/v1";
import type { EndpointRecord } from "../../db/endpoint-store.js";
import type { AttemptRecord, DeliveryRecord } from "../../db/ledger-store.js";
import type { RecoveryRecord } from "../../db/recovery-store.js";
import { errorClassOf } from "../../domain/attempt-outcome.js";

export function toProtoEndpoint(endpoint: EndpointRecord): ProtoEndpoint {
  return {
    id: endpoint.id,
    tenantId: endpoint.tenantId,
    url: endpoint.url,
    description: endpoint.description,
    eventTypes: endpoint.eventTypes,
    apiVersion: endpoint.apiVersion,
    paused: endpoint.paused,
    attentionReason: endpoint.attentionReason ?? undefined,
    version: String(endpoint.version),
    createdAt: endpoint.createdAt.toISOString(),
    updatedAt: endpoint.updatedAt.toISOString(),
    previousSecretExpiresAt: endpoint.previousSecretExpiresAt?.toISOString(),
    // Filled from the attempts of the last 24 hours when answered (withHealth).
    health: endpoint.paused ? "paused" : "healthy",
    successRate24h: undefined,
    attempts24h: "0",
    attentionCause: endpoint.attentionCause ?? undefined,
    attentionSince: endpoint.attentionSince?.toISOString(),
    rateLimit: endpoint.rateLimit ?? undefined,
  };
}

export function toProtoRecovery(recovery: RecoveryRecord): ProtoRecovery {
  return {
    id: recovery.id,
    endpointId: recovery.endpointId,
    since: recovery.since.toISOString(),
    until: recovery.until?.toISOString(),
    state: recovery.state,
    total: String(recovery.total),
    done: String(recovery.redriven + recovery.skipped),
    redriven: String(recovery.redriven),
    skipped: String(recovery.skipped),
    failureCode: recovery.failureCode ?? undefined,
    createdAt: recovery.createdAt.toISOString(),
    startedAt: recovery.startedAt?.toISOString(),
    finishedAt: recovery.finishedAt?.toISOString(),
    updatedAt: recovery.updatedAt.toISOString(),
    actor: recovery.actor ?? undefined,
  };
}

export function toProtoDelivery(delivery: DeliveryRecord): ProtoDelivery {
  return {
    id: delivery.id,
    endpointId: delivery.endpointId,
    eventId: delivery.eventId,
    eventType: delivery.eventType,
    status: delivery.status,
    attempts: delivery.attempts,
    attemptsTotal: delivery.attemptsTotal,
    nextAttemptAt: delivery.nextAttemptAt?.toISOString(),
    livemode: delivery.livemode,
    lastStatusCode: delivery.lastStatusCode ?? undefined,
    lastError: delivery.lastError ?? undefined,
    createdAt: delivery.createdAt.toISOString(),
    updatedAt: delivery.updatedAt.toISOString(),
  };
}

export function toProtoAttempt(attempt: AttemptRecord): ProtoAttempt {
  return {
    number: attempt.number,
    attemptedAt: attempt.attemptedAt.toISOString(),
    durationMs: attempt.durationMs,
    succeeded: attempt.succeeded,
    statusCode: attempt.statusCode ?? undefined,
    error: attempt.error ?? undefined,
    responseBody: attempt.responseBody ?? Buffer.alloc(0),
    responseBodyTruncated: attempt.responseBodyTruncated,
    errorClass: errorClassOf(attempt) ?? "",
  };
}

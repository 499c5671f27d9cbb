import {
  CreateEndpointRequest,
  DeleteEndpointRequest,
  PauseEndpointRequest,
  RecoverDeliveriesRequest,
  RedriveDeliveryRequest,
  ResumeEndpointRequest,
  RotateSecretRequest,
  SendTestDeliveryRequest,
  UpdateEndpointRequest,
  WebhookServiceService,
  type Attempt as ProtoAttempt,
  type Delivery as ProtoDelivery,
  type Endpoint as ProtoEndpoint,
  type Recovery as ProtoRecovery,
} from "@platform/proto/webhooks/v1";
import { InvalidArgumentError } from "@platform/service-kit/errors";
import type { UnaryHandlers } from "@platform/service-kit/grpc-server";
import { fingerprintOf, runIdempotently, type IdempotencyOptions } from "@platform/service-kit/idempotency";
import type { Knex } from "@platform/service-kit/postgres";
import type { Logger } from "pino";
import {
  createEndpointStore,
  withoutSecrets,
  type EndpointPatch,
  type EndpointRecord,
  type EndpointStore,
  type EndpointWithSecrets,
} from "../db/endpoint-store.js";
import {
  appendEndpointAction,
  appendEndpointResumed,
  appendRecoveryStarted,
  type EndpointEvents,
} from "../db/endpoint-events.js";
import { countRecoverable, getRecovery, insertRecovery, type RecoveryRecord } from "../db/recovery-store.js";
import { errorClassOf } from "../domain/attempt-outcome.js";
import { endpointHealth, successRateOf } from "../domain/endpoint-health.js";
import { EndpointPausedError, recoveryActor, recoveryWindow } from "../domain/recovery.js";
import {
  createLedgerStore,
  deliveryState,
  type AttemptRecord,
  type DeliveryRecord,
  type LedgerStore,
} from "../db/ledger-store.js";
import type { TargetResolver } from "../delivery/target-resolver.js";
import type { DeliveryJob, DeliveryQueue } from "../domain/delivery-job.js";
import {
  checkExpectedVersion,
  currentApiVersion,
  DELIVERY_REDRIVEN,
  ENDPOINT_CREATED,
  ENDPOINT_DELETED,
  ENDPOINT_PAUSED,
  ENDPOINT_SECRET_ROTATED,
  ENDPOINT_UPDATED,
  endpointRefusal,
  TEST_DELIVERY_SENT,
  InvalidEndpointError,
  validateEndpointUpdate,
  validateNewEndpoint,
} from "../domain/endpoint.js";
import { buildEnvelope, serializeEnvelope } from "../domain/envelope.js";
import { eventCatalog } from "../domain/event-catalog.js";
import { newDeliveryId, newEndpointId, newEventId, newRecoveryId } from "../domain/ids.js";
import { decodeCursor, encodeCursor, pageSize } from "../domain/page-cursor.js";
import { deliveryStatuses, redrive, redriveWindowMs, type DeliveryStatus } from "../domain/delivery-state.js";
import { generateSigningSecret, openSecret, sealSecret, type SecretKeyRing } from "../domain/secret-box.js";
import { rotationGraceMs } from "../domain/signature.js";
import { buildTestEvent } from "../domain/test-event.js";

export interface WebhookServiceDeps {
  db: Knex;
  /** SECRETS_KEY: signing secrets are sealed with the endpoint id as context before they are stored. */
  keyRing: SecretKeyRing;
  /** Where due deliveries are announced after their transaction commits. */
  queue: DeliveryQueue;
  /** Checks (and refuses) endpoint hosts at creation and on a URL change. */
  targets: TargetResolver;
  idempotency: IdempotencyOptions;
  /** How long deliveries may be redriven, counted from their creation (WEBHOOKS_RETENTION; 30 days). */
  retentionMs?: number;
  clock?: () => Date;
  /** Where `webhook.endpoint_resumed` goes (the tenant projections); absent: not announced. */
  events?: EndpointEvents;
  endpoints?: EndpointStore;
  ledger?: LedgerStore;
}

const statsWindowMs = 24 * 60 * 60 * 1000;

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

function toProtoAttempt(attempt: AttemptRecord): ProtoAttempt {
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

/**
 * What an idempotency record keeps of an answer that shows a secret: the endpoint and the secret
 * SEALED (as the row holds it, under the endpoint id), never the plaintext. A replay opens it.
 */
interface StoredSecretAnswer {
  endpoint: ProtoEndpoint;
  secretSealed: string;
}

function requireTenant(tenantId: string): string {
  if (tenantId === "") throw new InvalidArgumentError("request.invalid", "tenant_id is required");
  return tenantId;
}

function expectedVersionOf(value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const version = Number(value);
  if (!Number.isSafeInteger(version) || version < 1) {
    throw new InvalidArgumentError("request.invalid", "expected_version must be a positive integer");
  }
  return version;
}

function statusFilter(status: string): DeliveryStatus | undefined {
  if (status === "") return undefined;
  if (!(deliveryStatuses as readonly string[]).includes(status)) {
    throw new InvalidArgumentError("request.invalid", `status must be one of ${deliveryStatuses.join(", ")}`);
  }
  return status as DeliveryStatus;
}

/** Validation of endpoint input, with the narrowest code for a partner to branch on. */
function validated<T>(validate: () => T): T {
  try {
    return validate();
  } catch (error) {
    throw error instanceof InvalidEndpointError ? endpointRefusal(error) : error;
  }
}

/**
 * webhooks.v1.WebhookService: a tenant's endpoints and their secrets, the event catalog, and the
 * delivery ledger (list, inspect, redrive, stats, test deliveries). Every mutation runs once per
 * Idempotency-Key (scope: the tenant); deliveries it makes due are enqueued after its commit.
 */
export function createWebhookService(deps: WebhookServiceDeps): UnaryHandlers<typeof WebhookServiceService> {
  const clock = deps.clock ?? (() => new Date());
  const endpoints = deps.endpoints ?? createEndpointStore(deps.db);
  const ledger = deps.ledger ?? createLedgerStore(deps.db);
  const retentionMs = deps.retentionMs ?? redriveWindowMs;

  const once = <R>(tenantId: string, key: string, fingerprint: string, effect: (trx: Knex.Transaction) => Promise<R>) =>
    runIdempotently(deps.db, { scope: tenantId, key, fingerprint }, effect, deps.idempotency);

  /**
   * Who did what to an endpoint, for the activity feed: an internal fact written in the transaction
   * of the change (so a replay adds nothing), with the caller's x-actor when a person asked.
   */
  async function recordAction(
    trx: Knex.Transaction,
    action: { tenantId: string; type: string; endpointId: string; deliveryId?: string; actor: string | undefined },
  ): Promise<boolean> {
    if (!deps.events) return false;
    await appendEndpointAction(trx, deps.events.namespace, action);
    return true;
  }

  /** After the commit: a lost enqueue is logged, and the sweeper enqueues the overdue delivery. */
  async function announce(jobs: readonly DeliveryJob[], logger: Logger) {
    if (jobs.length === 0) return;
    try {
      await deps.queue.enqueue(jobs);
    } catch (error) {
      logger.warn(
        { err: error, deliveryIds: jobs.map((job) => job.deliveryId) },
        "enqueue after commit failed; the sweeper will enqueue the due deliveries",
      );
    }
  }

  const openAnswer = (stored: StoredSecretAnswer) => ({
    endpoint: stored.endpoint,
    secret: openSecret(deps.keyRing, stored.secretSealed, stored.endpoint.id),
  });

  /**
   * The endpoints with their health and 24-hour success rate, read now (a replayed answer shows
   * the current health: it describes the endpoint, not the effect).
   */
  async function withHealth(answered: ProtoEndpoint[]): Promise<ProtoEndpoint[]> {
    const until = clock();
    const counts = await ledger.attemptCounts(
      answered.map((endpoint) => endpoint.id),
      new Date(until.getTime() - statsWindowMs),
      until,
    );
    return answered.map((endpoint) => {
      const attempts = counts.get(endpoint.id) ?? { attempts: 0, succeeded: 0 };
      return {
        ...endpoint,
        health: endpointHealth(endpoint.paused, attempts),
        successRate24h: successRateOf(attempts) ?? undefined,
        attempts24h: String(attempts.attempts),
      };
    });
  }
  const oneWithHealth = async (endpoint: ProtoEndpoint | undefined) =>
    endpoint ? (await withHealth([endpoint]))[0] : undefined;

  async function checkTarget(url: string) {
    await deps.targets.resolve(new URL(url));
  }

  /** Locks the endpoint, checks expected_version, writes the change: the common body of mutations. */
  async function change(
    trx: Knex.Transaction,
    request: { tenantId: string; endpointId: string; expectedVersion?: string | undefined },
    patch: (endpoint: EndpointWithSecrets, now: Date) => EndpointPatch,
  ) {
    const expected = expectedVersionOf(request.expectedVersion);
    const current = await endpoints.lock(trx, request.tenantId, request.endpointId);
    checkExpectedVersion(current.version, expected);
    const now = clock();
    return endpoints.update(trx, current.id, patch(current, now), now);
  }

  return {
    async createEndpoint(request, { logger, actor }) {
      const tenantId = requireTenant(request.tenantId);
      const endpoint = validated(() =>
        validateNewEndpoint({ url: request.url, description: request.description, eventTypes: request.eventTypes }),
      );
      const fingerprint = fingerprintOf(
        "webhooks.v1.WebhookService/CreateEndpoint",
        CreateEndpointRequest.encode({ ...request, idempotencyKey: "" }).finish(),
      );
      await checkTarget(endpoint.url);
      const outcome = await once(tenantId, request.idempotencyKey, fingerprint, async (trx) => {
        const id = newEndpointId();
        const secretSealed = sealSecret(deps.keyRing, generateSigningSecret(), id);
        const created = await endpoints.insert(trx, { ...endpoint, id, tenantId, secretSealed, now: clock() });
        await recordAction(trx, { tenantId, type: ENDPOINT_CREATED, endpointId: id, actor });
        return { endpoint: toProtoEndpoint(withoutSecrets(created)), secretSealed } satisfies StoredSecretAnswer;
      });
      if (!outcome.replayed) {
        logger.info({ tenantId, endpointId: outcome.result.endpoint.id }, "endpoint created");
        deps.events?.kick();
      }
      const answer = openAnswer(outcome.result);
      return { ...answer, endpoint: await oneWithHealth(answer.endpoint), replayed: outcome.replayed };
    },

    async getEndpoint(request) {
      const endpoint = await endpoints.get(deps.db, requireTenant(request.tenantId), request.endpointId);
      return { endpoint: await oneWithHealth(toProtoEndpoint(withoutSecrets(endpoint))) };
    },

    async listEndpoints(request) {
      const tenantId = requireTenant(request.tenantId);
      const page = await endpoints.list(tenantId, {
        limit: pageSize(request.limit),
        afterSeq: decodeCursor(request.cursor),
      });
      return {
        endpoints: await withHealth(page.endpoints.map(toProtoEndpoint)),
        nextCursor: page.nextAfterSeq === undefined ? "" : encodeCursor(page.nextAfterSeq),
      };
    },

    async updateEndpoint(request, { logger, actor }) {
      const tenantId = requireTenant(request.tenantId);
      const changes = validated(() =>
        validateEndpointUpdate({
          url: request.url,
          description: request.description,
          eventTypes: request.eventTypes?.eventTypes,
        }),
      );
      const fingerprint = fingerprintOf(
        "webhooks.v1.WebhookService/UpdateEndpoint",
        UpdateEndpointRequest.encode({ ...request, idempotencyKey: "" }).finish(),
      );
      if (changes.url !== undefined) await checkTarget(changes.url);
      const outcome = await once(tenantId, request.idempotencyKey, fingerprint, async (trx) => {
        const updated = await change(trx, request, () => changes);
        await recordAction(trx, { tenantId, type: ENDPOINT_UPDATED, endpointId: updated.id, actor });
        return { endpoint: toProtoEndpoint(withoutSecrets(updated)) };
      });
      if (!outcome.replayed) {
        logger.info({ tenantId, endpointId: request.endpointId }, "endpoint updated");
        deps.events?.kick();
      }
      return { endpoint: await oneWithHealth(outcome.result.endpoint), replayed: outcome.replayed };
    },

    async deleteEndpoint(request, { logger, actor }) {
      const tenantId = requireTenant(request.tenantId);
      const fingerprint = fingerprintOf(
        "webhooks.v1.WebhookService/DeleteEndpoint",
        DeleteEndpointRequest.encode({ ...request, idempotencyKey: "" }).finish(),
      );
      const outcome = await once(tenantId, request.idempotencyKey, fingerprint, async (trx) => {
        const deleted = await change(trx, request, (_endpoint, now) => ({ deletedAt: now }));
        await recordAction(trx, { tenantId, type: ENDPOINT_DELETED, endpointId: deleted.id, actor });
        return null;
      });
      if (!outcome.replayed) {
        logger.info({ tenantId, endpointId: request.endpointId }, "endpoint deleted");
        deps.events?.kick();
      }
      return { replayed: outcome.replayed };
    },

    async pauseEndpoint(request, { logger, actor }) {
      const tenantId = requireTenant(request.tenantId);
      const fingerprint = fingerprintOf(
        "webhooks.v1.WebhookService/PauseEndpoint",
        PauseEndpointRequest.encode({ ...request, idempotencyKey: "" }).finish(),
      );
      const outcome = await once(tenantId, request.idempotencyKey, fingerprint, async (trx) => {
        const updated = await change(trx, request, () => ({ paused: true }));
        await recordAction(trx, { tenantId, type: ENDPOINT_PAUSED, endpointId: updated.id, actor });
        return { endpoint: toProtoEndpoint(withoutSecrets(updated)) };
      });
      if (!outcome.replayed) {
        logger.info({ tenantId, endpointId: request.endpointId }, "endpoint paused");
        deps.events?.kick();
      }
      return { endpoint: await oneWithHealth(outcome.result.endpoint), replayed: outcome.replayed };
    },

    async resumeEndpoint(request, { logger, actor }) {
      const tenantId = requireTenant(request.tenantId);
      const fingerprint = fingerprintOf(
        "webhooks.v1.WebhookService/ResumeEndpoint",
        ResumeEndpointRequest.encode({ ...request, idempotencyKey: "" }).finish(),
      );
      let released: DeliveryJob[] = [];
      let announced = false as boolean;
      const outcome = await once(tenantId, request.idempotencyKey, fingerprint, async (trx) => {
        const updated = await change(trx, request, () => ({ paused: false, attentionReason: null }));
        released = await ledger.releaseHeld(trx, updated.id, clock());
        if (deps.events) {
          // Every resume is in the activity feed; one after a dead letter closes its attention item.
          await appendEndpointResumed(trx, deps.events.namespace, { tenantId, endpointId: updated.id, actor });
          announced = true;
        }
        return { endpoint: toProtoEndpoint(withoutSecrets(updated)) };
      });
      if (!outcome.replayed) {
        logger.info({ tenantId, endpointId: request.endpointId, released: released.length }, "endpoint resumed");
        if (announced) deps.events?.kick();
        await announce(released, logger);
      }
      return { endpoint: await oneWithHealth(outcome.result.endpoint), replayed: outcome.replayed };
    },

    async rotateSecret(request, { logger, actor }) {
      const tenantId = requireTenant(request.tenantId);
      const fingerprint = fingerprintOf(
        "webhooks.v1.WebhookService/RotateSecret",
        RotateSecretRequest.encode({ ...request, idempotencyKey: "" }).finish(),
      );
      const outcome = await once(tenantId, request.idempotencyKey, fingerprint, async (trx) => {
        let secretSealed = "";
        const updated = await change(trx, request, (current, now) => {
          secretSealed = sealSecret(deps.keyRing, generateSigningSecret(), current.id);
          // The current secret (sealed under the same endpoint id) keeps signing for 24 hours.
          return {
            secretSealed,
            previousSecretSealed: current.secretSealed,
            previousSecretExpiresAt: new Date(now.getTime() + rotationGraceMs),
          };
        });
        await recordAction(trx, { tenantId, type: ENDPOINT_SECRET_ROTATED, endpointId: updated.id, actor });
        return { endpoint: toProtoEndpoint(withoutSecrets(updated)), secretSealed } satisfies StoredSecretAnswer;
      });
      if (!outcome.replayed) {
        logger.info({ tenantId, endpointId: request.endpointId }, "endpoint secret rotated");
        deps.events?.kick();
      }
      const answer = openAnswer(outcome.result);
      return { ...answer, endpoint: await oneWithHealth(answer.endpoint), replayed: outcome.replayed };
    },

    // eslint-disable-next-line @typescript-eslint/require-await
    async listEventTypes() {
      return {
        eventTypes: eventCatalog.map((event) => ({
          type: event.type,
          description: event.description,
          emission: event.emission,
          subscribable: event.subscribable,
        })),
        currentApiVersion,
      };
    },

    async listDeliveries(request) {
      const tenantId = requireTenant(request.tenantId);
      const limit = pageSize(request.limit);
      const afterSeq = decodeCursor(request.cursor);
      const status = statusFilter(request.status);
      await endpoints.get(deps.db, tenantId, request.endpointId);
      const page = await ledger.list(tenantId, request.endpointId, {
        limit,
        afterSeq,
        status,
        eventType: request.eventType === "" ? undefined : request.eventType,
        eventId: request.eventId === "" ? undefined : request.eventId,
      });
      return {
        deliveries: page.deliveries.map(toProtoDelivery),
        nextCursor: page.nextAfterSeq === undefined ? "" : encodeCursor(page.nextAfterSeq),
      };
    },

    async getDelivery(request) {
      const tenantId = requireTenant(request.tenantId);
      await endpoints.get(deps.db, tenantId, request.endpointId);
      const { delivery, attempts, payload } = await ledger.inspect(tenantId, request.endpointId, request.deliveryId);
      return { delivery: toProtoDelivery(delivery), attempts: attempts.map(toProtoAttempt), payload };
    },

    async redriveDelivery(request, { logger, actor }) {
      const tenantId = requireTenant(request.tenantId);
      const fingerprint = fingerprintOf(
        "webhooks.v1.WebhookService/RedriveDelivery",
        RedriveDeliveryRequest.encode({ ...request, idempotencyKey: "" }).finish(),
      );
      let jobs: DeliveryJob[] = [];
      const outcome = await once(tenantId, request.idempotencyKey, fingerprint, async (trx) => {
        const endpoint = await endpoints.lock(trx, tenantId, request.endpointId);
        const delivery = await ledger.lock(trx, tenantId, endpoint.id, request.deliveryId);
        const now = clock();
        const state = redrive(deliveryState(delivery), { now, endpointPaused: endpoint.paused, windowMs: retentionMs });
        const restarted = await ledger.restart(trx, delivery.id, state, now);
        const endpointId = endpoint.id;
        await recordAction(trx, { tenantId, type: DELIVERY_REDRIVEN, endpointId, deliveryId: restarted.id, actor });
        jobs = restarted.status === "held" ? [] : [{ deliveryId: restarted.id, generation: restarted.generation }];
        return { delivery: toProtoDelivery(restarted) };
      });
      if (!outcome.replayed) {
        logger.info({ tenantId, endpointId: request.endpointId, deliveryId: request.deliveryId }, "delivery redriven");
        deps.events?.kick();
        await announce(jobs, logger);
      }
      return { delivery: outcome.result.delivery, replayed: outcome.replayed };
    },

    async getEndpointStats(request) {
      const tenantId = requireTenant(request.tenantId);
      const endpoint = await endpoints.get(deps.db, tenantId, request.endpointId);
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

    async sendTestDelivery(request, { logger, actor }) {
      const tenantId = requireTenant(request.tenantId);
      // Refuse an unknown or coming-soon type before anything is claimed.
      buildTestEvent({ id: newEventId(), type: request.eventType, tenant: tenantId, now: clock() });
      const fingerprint = fingerprintOf(
        "webhooks.v1.WebhookService/SendTestDelivery",
        SendTestDeliveryRequest.encode({ ...request, idempotencyKey: "" }).finish(),
      );
      let jobs: DeliveryJob[] = [];
      const outcome = await once(tenantId, request.idempotencyKey, fingerprint, async (trx) => {
        const endpoint = await endpoints.lock(trx, tenantId, request.endpointId);
        const now = clock();
        const event = buildTestEvent({ id: newEventId(), type: request.eventType, tenant: tenantId, now });
        const payload = serializeEnvelope(buildEnvelope(event, { apiVersion: endpoint.apiVersion, livemode: false }));
        const delivery = await ledger.insertTestDelivery(trx, {
          tenantId,
          endpointId: endpoint.id,
          event,
          deliveryId: newDeliveryId(),
          payload: payload.toString("utf8"),
          held: endpoint.paused,
          now,
        });
        jobs = delivery.status === "held" ? [] : [{ deliveryId: delivery.id, generation: delivery.generation }];
        const endpointId = endpoint.id;
        await recordAction(trx, { tenantId, type: TEST_DELIVERY_SENT, endpointId, deliveryId: delivery.id, actor });
        return { delivery: toProtoDelivery(delivery) };
      });
      if (!outcome.replayed) {
        deps.events?.kick();
        logger.info(
          { tenantId, endpointId: request.endpointId, deliveryId: outcome.result.delivery.id },
          "test delivery created",
        );
        await announce(jobs, logger);
      }
      return { delivery: outcome.result.delivery, replayed: outcome.replayed };
    },

    async recoverDeliveries(request, { logger, actor: caller }) {
      const tenantId = requireTenant(request.tenantId);
      // The request's actor when given (API callers name themselves), else the caller's x-actor.
      const actor = recoveryActor(request.actor || caller);
      const window = recoveryWindow({ since: request.since, until: request.until }, { now: clock(), retentionMs });
      const fingerprint = fingerprintOf(
        "webhooks.v1.WebhookService/RecoverDeliveries",
        RecoverDeliveriesRequest.encode({ ...request, idempotencyKey: "" }).finish(),
      );
      const outcome = await once(tenantId, request.idempotencyKey, fingerprint, async (trx) => {
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
        if (deps.events) await appendRecoveryStarted(trx, deps.events.namespace, recovery);
        return { wouldRecover: String(recovery.total), recovery: toProtoRecovery(recovery) };
      });
      if (!outcome.replayed && outcome.result.recovery) {
        deps.events?.kick();
        logger.info(
          {
            tenantId,
            endpointId: request.endpointId,
            recoveryId: outcome.result.recovery.id,
            total: outcome.result.wouldRecover,
          },
          "recovery created",
        );
      }
      return { ...outcome.result, replayed: outcome.replayed };
    },

    async getRecovery(request) {
      const tenantId = requireTenant(request.tenantId);
      await endpoints.get(deps.db, tenantId, request.endpointId);
      const recovery = await getRecovery(deps.db, tenantId, request.endpointId, request.recoveryId);
      return { recovery: toProtoRecovery(recovery) };
    },
  };
}

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
  type Endpoint as ProtoEndpoint,
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
  type EndpointStore,
  type EndpointWithSecrets,
} from "../db/endpoint-store.js";
import {
  appendEndpointAction,
  appendEndpointResumed,
  appendRecoveryStarted,
  type EndpointEvents,
} from "../db/endpoint-events.js";
import { actorOf } from "../domain/actor.js";
import { countRecoverable, getRecovery, insertRecovery, listRecoveries } from "../db/recovery-store.js";
import { endpointHealth, successRateOf } from "../domain/endpoint-health.js";
import { EndpointPausedError, recoveryWindow } from "../domain/recovery.js";
import { createLedgerStore, deliveryState, type LedgerStore } from "../db/ledger-store.js";
import type { TargetResolver } from "../delivery/target-resolver.js";
import type { DeliveryJob, DeliveryQueue } from "../domain/delivery-job.js";
import {
  checkExpectedVersion,
  currentApiVersion,
  endpointActionTypes,
  endpointRefusal,
  type EndpointActionType,
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
import { toProtoAttempt, toProtoDelivery, toProtoEndpoint, toProtoRecovery } from "./webhook-service/proto-mappers.js";

export { toProtoDelivery, toProtoEndpoint, toProtoRecovery } from "./webhook-service/proto-mappers.js";

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

  /** The action's fact for the activity feed, in the transaction of the action. */
  async function recordAction(
    trx: Knex.Transaction,
    tenantId: string,
    type: EndpointActionType,
    action: { endpointId: string; deliveryId?: string; actor: string | null; traceparent: string | undefined },
  ) {
    if (deps.events) await appendEndpointAction(trx, deps.events.namespace, { tenantId, type, ...action });
  }
  /** After an action's commit: the relay publishes its fact now rather than at its next poll. */
  const kickRelay = (replayed: boolean) => {
    if (!replayed) deps.events?.kick();
  };

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
    async createEndpoint(request, { logger, traceparent }) {
      const tenantId = requireTenant(request.tenantId);
      const actor = actorOf(request.actor);
      const endpoint = validated(() =>
        validateNewEndpoint({ url: request.url, description: request.description, eventTypes: request.eventTypes }),
      );
      const fingerprint = fingerprintOf(
        "webhooks.v1.WebhookService/CreateEndpoint",
        CreateEndpointRequest.encode({ ...request, idempotencyKey: "", actor: undefined }).finish(),
      );
      await checkTarget(endpoint.url);
      const outcome = await once(tenantId, request.idempotencyKey, fingerprint, async (trx) => {
        const id = newEndpointId();
        const secretSealed = sealSecret(deps.keyRing, generateSigningSecret(), id);
        const created = await endpoints.insert(trx, { ...endpoint, id, tenantId, secretSealed, now: clock() });
        await recordAction(trx, tenantId, endpointActionTypes.created, { endpointId: id, actor, traceparent });
        return { endpoint: toProtoEndpoint(withoutSecrets(created)), secretSealed } satisfies StoredSecretAnswer;
      });
      if (!outcome.replayed) logger.info({ tenantId, endpointId: outcome.result.endpoint.id }, "endpoint created");
      kickRelay(outcome.replayed);
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

    async updateEndpoint(request, { logger, traceparent }) {
      const tenantId = requireTenant(request.tenantId);
      const actor = actorOf(request.actor);
      const changes = validated(() =>
        validateEndpointUpdate({
          url: request.url,
          description: request.description,
          eventTypes: request.eventTypes?.eventTypes,
        }),
      );
      const fingerprint = fingerprintOf(
        "webhooks.v1.WebhookService/UpdateEndpoint",
        UpdateEndpointRequest.encode({ ...request, idempotencyKey: "", actor: undefined }).finish(),
      );
      if (changes.url !== undefined) await checkTarget(changes.url);
      const outcome = await once(tenantId, request.idempotencyKey, fingerprint, async (trx) => {
        const updated = await change(trx, request, () => changes);
        await recordAction(trx, tenantId, endpointActionTypes.updated, { endpointId: updated.id, actor, traceparent });
        return { endpoint: toProtoEndpoint(withoutSecrets(updated)) };
      });
      if (!outcome.replayed) logger.info({ tenantId, endpointId: request.endpointId }, "endpoint updated");
      kickRelay(outcome.replayed);
      return { endpoint: await oneWithHealth(outcome.result.endpoint), replayed: outcome.replayed };
    },

    async deleteEndpoint(request, { logger, traceparent }) {
      const tenantId = requireTenant(request.tenantId);
      const fingerprint = fingerprintOf(
        "webhooks.v1.WebhookService/DeleteEndpoint",
        DeleteEndpointRequest.encode({ ...request, idempotencyKey: "", actor: undefined }).finish(),
      );
      const actor = actorOf(request.actor);
      const outcome = await once(tenantId, request.idempotencyKey, fingerprint, async (trx) => {
        const deleted = await change(trx, request, (_endpoint, now) => ({ deletedAt: now }));
        await recordAction(trx, tenantId, endpointActionTypes.deleted, { endpointId: deleted.id, actor, traceparent });
        return null;
      });
      if (!outcome.replayed) logger.info({ tenantId, endpointId: request.endpointId }, "endpoint deleted");
      kickRelay(outcome.replayed);
      return { replayed: outcome.replayed };
    },

    async pauseEndpoint(request, { logger, traceparent }) {
      const tenantId = requireTenant(request.tenantId);
      const fingerprint = fingerprintOf(
        "webhooks.v1.WebhookService/PauseEndpoint",
        PauseEndpointRequest.encode({ ...request, idempotencyKey: "", actor: undefined }).finish(),
      );
      const actor = actorOf(request.actor);
      const outcome = await once(tenantId, request.idempotencyKey, fingerprint, async (trx) => {
        const updated = await change(trx, request, () => ({ paused: true }));
        await recordAction(trx, tenantId, endpointActionTypes.paused, { endpointId: updated.id, actor, traceparent });
        return { endpoint: toProtoEndpoint(withoutSecrets(updated)) };
      });
      if (!outcome.replayed) logger.info({ tenantId, endpointId: request.endpointId }, "endpoint paused");
      kickRelay(outcome.replayed);
      return { endpoint: await oneWithHealth(outcome.result.endpoint), replayed: outcome.replayed };
    },

    async resumeEndpoint(request, { logger, traceparent }) {
      const tenantId = requireTenant(request.tenantId);
      const fingerprint = fingerprintOf(
        "webhooks.v1.WebhookService/ResumeEndpoint",
        ResumeEndpointRequest.encode({ ...request, idempotencyKey: "", actor: undefined }).finish(),
      );
      const actor = actorOf(request.actor);
      let released: DeliveryJob[] = [];
      const outcome = await once(tenantId, request.idempotencyKey, fingerprint, async (trx) => {
        const updated = await change(trx, request, () => ({ paused: false, attentionReason: null }));
        released = await ledger.releaseHeld(trx, updated.id, clock());
        // The activity entry; and the attention item a dead letter opened closes with this commit.
        if (deps.events) {
          await appendEndpointResumed(trx, deps.events.namespace, {
            tenantId,
            endpointId: updated.id,
            actor,
            traceparent,
          });
        }
        return { endpoint: toProtoEndpoint(withoutSecrets(updated)) };
      });
      if (!outcome.replayed) {
        logger.info({ tenantId, endpointId: request.endpointId, released: released.length }, "endpoint resumed");
        kickRelay(outcome.replayed);
        await announce(released, logger);
      }
      return { endpoint: await oneWithHealth(outcome.result.endpoint), replayed: outcome.replayed };
    },

    async rotateSecret(request, { logger, traceparent }) {
      const tenantId = requireTenant(request.tenantId);
      const fingerprint = fingerprintOf(
        "webhooks.v1.WebhookService/RotateSecret",
        RotateSecretRequest.encode({ ...request, idempotencyKey: "", actor: undefined }).finish(),
      );
      const actor = actorOf(request.actor);
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
        await recordAction(trx, tenantId, endpointActionTypes.secretRotated, {
          endpointId: updated.id,
          actor,
          traceparent,
        });
        return { endpoint: toProtoEndpoint(withoutSecrets(updated)), secretSealed } satisfies StoredSecretAnswer;
      });
      if (!outcome.replayed) logger.info({ tenantId, endpointId: request.endpointId }, "endpoint secret rotated");
      kickRelay(outcome.replayed);
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

    async redriveDelivery(request, { logger, traceparent }) {
      const tenantId = requireTenant(request.tenantId);
      const fingerprint = fingerprintOf(
        "webhooks.v1.WebhookService/RedriveDelivery",
        RedriveDeliveryRequest.encode({ ...request, idempotencyKey: "", actor: undefined }).finish(),
      );
      const actor = actorOf(request.actor);
      let jobs: DeliveryJob[] = [];
      const outcome = await once(tenantId, request.idempotencyKey, fingerprint, async (trx) => {
        const endpoint = await endpoints.lock(trx, tenantId, request.endpointId);
        const delivery = await ledger.lock(trx, tenantId, endpoint.id, request.deliveryId);
        const now = clock();
        const state = redrive(deliveryState(delivery), { now, endpointPaused: endpoint.paused, windowMs: retentionMs });
        const restarted = await ledger.restart(trx, delivery.id, state, now);
        jobs = restarted.status === "held" ? [] : [{ deliveryId: restarted.id, generation: restarted.generation }];
        await recordAction(trx, tenantId, endpointActionTypes.deliveryRedriven, {
          endpointId: endpoint.id,
          deliveryId: restarted.id,
          actor,
          traceparent,
        });
        return { delivery: toProtoDelivery(restarted) };
      });
      kickRelay(outcome.replayed);
      if (!outcome.replayed) {
        logger.info({ tenantId, endpointId: request.endpointId, deliveryId: request.deliveryId }, "delivery redriven");
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

    async sendTestDelivery(request, { logger, traceparent }) {
      const tenantId = requireTenant(request.tenantId);
      // Refuse an unknown or coming-soon type before anything is claimed.
      buildTestEvent({ id: newEventId(), type: request.eventType, tenant: tenantId, now: clock() });
      const fingerprint = fingerprintOf(
        "webhooks.v1.WebhookService/SendTestDelivery",
        SendTestDeliveryRequest.encode({ ...request, idempotencyKey: "", actor: undefined }).finish(),
      );
      const actor = actorOf(request.actor);
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
          traceparent,
        });
        jobs = delivery.status === "held" ? [] : [{ deliveryId: delivery.id, generation: delivery.generation }];
        await recordAction(trx, tenantId, endpointActionTypes.testDeliverySent, {
          endpointId: endpoint.id,
          deliveryId: delivery.id,
          actor,
          traceparent,
        });
        return { delivery: toProtoDelivery(delivery) };
      });
      kickRelay(outcome.replayed);
      if (!outcome.replayed) {
        logger.info(
          { tenantId, endpointId: request.endpointId, deliveryId: outcome.result.delivery.id },
          "test delivery created",
        );
        await announce(jobs, logger);
      }
      return { delivery: outcome.result.delivery, replayed: outcome.replayed };
    },

    async recoverDeliveries(request, { logger, traceparent }) {
      const tenantId = requireTenant(request.tenantId);
      const actor = actorOf(request.actor);
      const fingerprint = fingerprintOf(
        "webhooks.v1.WebhookService/RecoverDeliveries",
        RecoverDeliveriesRequest.encode({ ...request, idempotencyKey: "", actor: undefined }).finish(),
      );
      const outcome = await once(tenantId, request.idempotencyKey, fingerprint, async (trx) => {
        // Checked on the first execution only: a replay answers as the first did, even once its
        // since has left the retention.
        const window = recoveryWindow({ since: request.since, until: request.until }, { now: clock(), retentionMs });
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
        if (deps.events) await appendRecoveryStarted(trx, deps.events.namespace, recovery, traceparent);
        return { wouldRecover: String(recovery.total), recovery: toProtoRecovery(recovery) };
      });
      if (!outcome.replayed && outcome.result.recovery) {
        kickRelay(outcome.replayed);
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

    async listRecoveries(request) {
      const tenantId = requireTenant(request.tenantId);
      const endpoint = await endpoints.get(deps.db, tenantId, request.endpointId);
      const recoveries = await listRecoveries(deps.db, tenantId, endpoint.id, pageSize(request.limit));
      return { recoveries: recoveries.map(toProtoRecovery) };
    },
  };
}

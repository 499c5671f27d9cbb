/**
 * What the resources of webhooks.v1.WebhookService share: their dependencies, resolved once; the
 * service's `declareMutation` (service-kit's, with this service's tenant check and relay kick);
 * and the steps more than one resource takes: the tenant check, expected_version, the endpoint
 * change body, the action's fact, endpoint health, and the enqueue after a commit.
 */
import type { Endpoint as ProtoEndpoint, WebhookServiceService } from "@platform/proto/webhooks/v1";
import { InvalidArgumentError } from "@platform/service-kit/errors";
import type { CallContext, UnaryHandlers } from "@platform/service-kit/grpc-server";
import type { IdempotencyOptions } from "@platform/service-kit/idempotency";
import { mutationsOf } from "@platform/service-kit/mutation";
import type { Knex } from "@platform/service-kit/postgres";
import type { Logger } from "pino";
import { appendEndpointAction, type EndpointEvents } from "../../db/endpoint-events.js";
import {
  createEndpointStore,
  type EndpointPatch,
  type EndpointStore,
  type EndpointWithSecrets,
} from "../../db/endpoint-store.js";
import { createLedgerStore, type LedgerStore } from "../../db/ledger-store.js";
import type { TargetResolver } from "../../delivery/target-resolver.js";
import type { DeliveryJob, DeliveryQueue } from "../../domain/delivery-job.js";
import { redriveWindowMs } from "../../domain/delivery-state.js";
import { endpointHealth, successRateOf } from "../../domain/endpoint-health.js";
import { checkExpectedVersion, type EndpointActionType } from "../../domain/endpoint.js";
import type { SecretKeyRing } from "../../domain/secret-box.js";

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

/** The handlers of some of the service's methods: one resource's share of the service. */
export type WebhookHandlers<Method extends keyof typeof WebhookServiceService> = Pick<
  UnaryHandlers<typeof WebhookServiceService>,
  Method
>;

/** The window of an endpoint's health and stats: the last 24 hours. */
export const statsWindowMs = 24 * 60 * 60 * 1000;

export function requireTenant(tenantId: string): string {
  if (tenantId === "") throw new InvalidArgumentError("request.invalid", "tenant_id is required");
  return tenantId;
}

export function expectedVersionOf(value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const version = Number(value);
  if (!Number.isSafeInteger(version) || version < 1) {
    throw new InvalidArgumentError("request.invalid", "expected_version must be a positive integer");
  }
  return version;
}

/** What an action's fact takes from a mutation's input: the tenant, the checked actor, the call's trace. */
export interface ActionInput {
  tenantId: string;
  prepared: { actor: string | null };
  call: Pick<CallContext, "traceparent">;
}

/** The dependencies resolved once, and the steps the resources share. */
export type WebhookContext = ReturnType<typeof webhookContextOf>;

export function webhookContextOf(deps: WebhookServiceDeps) {
  const clock = deps.clock ?? (() => new Date());
  const endpoints = deps.endpoints ?? createEndpointStore(deps.db);
  const ledger = deps.ledger ?? createLedgerStore(deps.db);

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

  return {
    deps,
    clock,
    endpoints,
    ledger,
    retentionMs: deps.retentionMs ?? redriveWindowMs,
    /**
     * `declareMutation(WebhookServiceService.method, spec)`: the tenant check ("tenant_id is
     * required"), run once per Idempotency-Key, the fact in the effect's transaction, the log line,
     * and the relay kick after a first commit that recorded a fact.
     */
    declareMutation: mutationsOf({
      db: deps.db,
      idempotency: deps.idempotency,
      tenantOf: (request) => requireTenant(request.tenantId),
      kick: () => deps.events?.kick(),
    }),
    withHealth,
    oneWithHealth: async (endpoint: ProtoEndpoint | undefined) =>
      endpoint ? (await withHealth([endpoint]))[0] : undefined,

    /** Locks the endpoint, checks expected_version, writes the change: the common body of endpoint mutations. */
    async change(
      trx: Knex.Transaction,
      request: { tenantId: string; endpointId: string; expectedVersion?: string | undefined },
      patch: (endpoint: EndpointWithSecrets, now: Date) => EndpointPatch,
    ) {
      const expected = expectedVersionOf(request.expectedVersion);
      const current = await endpoints.lock(trx, request.tenantId, request.endpointId);
      checkExpectedVersion(current.version, expected);
      const now = clock();
      return endpoints.update(trx, current.id, patch(current, now), now);
    },

    /**
     * The action's fact for the activity feed, in the transaction of the action; how many facts it
     * wrote (none when the service announces no endpoint events).
     */
    async recordAction(
      trx: Knex.Transaction,
      { tenantId, prepared, call }: ActionInput,
      type: EndpointActionType,
      subject: { endpointId: string; deliveryId?: string },
    ): Promise<number> {
      if (!deps.events) return 0;
      await appendEndpointAction(trx, deps.events.namespace, {
        tenantId,
        type,
        ...subject,
        actor: prepared.actor,
        traceparent: call.traceparent,
      });
      return 1;
    },

    /** After the commit: a lost enqueue is logged, and the sweeper enqueues the overdue delivery. */
    async announce(jobs: readonly DeliveryJob[], logger: Logger): Promise<void> {
      if (jobs.length === 0) return;
      try {
        await deps.queue.enqueue(jobs);
      } catch (error) {
        logger.warn(
          { err: error, deliveryIds: jobs.map((job) => job.deliveryId) },
          "enqueue after commit failed; the sweeper will enqueue the due deliveries",
        );
      }
    },
  };
}

import { randomUUID } from "node:crypto";
import {
  NotificationServiceService,
  type ConversationMessage,
  type SendNotificationRequest,
  type SendNotificationResponse,
} from "@platform/proto/notify/v1";
import { DomainError } from "@platform/service-kit/errors";
import type { UnaryHandlers } from "@platform/service-kit/grpc-server";
import {
  fingerprintOf,
  IdempotencyInProgressError,
  IdempotencyKeyReusedError,
} from "@platform/service-kit/idempotency";
import type { Logger } from "@platform/service-kit/logger";
import { operationOf } from "@platform/service-kit/mutation";
import type { NotificationStore, StoredSend } from "../db/notification-store.js";
import {
  refusalError,
  type ChannelOutcome,
  type ChannelProvider,
  type ChannelRoute,
} from "../domain/channel-provider.js";
import { ChannelNotReadyError } from "../domain/send-preconditions.js";
import {
  ActionOutcomeUnknownError,
  canonicalNotification,
  maskRecipient,
  newNotificationId,
  newTranscriptEntryId,
  parseRecipient,
  renderNotification,
  renderParameters,
  validateNotification,
  type NotificationRequest,
} from "../domain/notification.js";
import { decideRepeat } from "../domain/notification-repeat.js";
import { requireTenantId } from "../domain/tenant.js";
import { decodeSeqCursor, resolvePageLimit, toSeqPage } from "../domain/seq-page.js";
import type { NotificationMetrics } from "./notification-metrics.js";
import { inSpan, noTracing, SpanKind, SpanStatusCode, type Tracer } from "@platform/service-kit/tracing";
import { allowanceView } from "../domain/testing-allowance.js";
import { toProtoAllowance } from "./tenant-service.js";
import { ChannelPacedError, type PaceOf } from "../domain/pacing.js";

/**
 * The send is notify's one mutation not declared with service-kit's declareMutation (mutation.ts):
 * its provider call must sit outside any transaction, between two commits of its own (record, then
 * complete; notification-store.ts), each one prepared statement on the send path's own pool, with
 * its own claim states (a send abandoned between them is settled as unknown, never sent twice).
 * It shares the pieces that fit: notify's tenant check, and the operation its fingerprint names,
 * from the generated path. Its fingerprint is over the canonical notification (what the validated
 * request asks to send: canonicalNotification), not the request's bytes, as it always was.
 */
const SEND_OPERATION = operationOf(NotificationServiceService.sendNotification);

export interface NotificationServiceDeps {
  store: NotificationStore;
  provider: ChannelProvider;
  metrics: NotificationMetrics;
  /** How long a send holds its key before a retry may settle it as unknown. */
  leaseMs: number;
  /** How long a key is remembered. */
  ttlMs: number;
  testingAllowance: number;
  /** Spans around the provider call (no-op by default and when tracing is off). */
  tracer?: Tracer;
  /**
   * Which number a tenant's send goes through and its pace (domain/pacing.ts); absent or
   * undefined for a tenant: not paced.
   */
  pace?: PaceOf;
  /**
   * The tenant's own number to send from (its connected channel, token opened); undefined when it
   * connected none (the provider's process-wide fallback applies). Absent: always the fallback.
   */
  channelRoute?: (tenantId: string) => Promise<ChannelRoute | undefined>;
  /** Why the tenant's messaging channel is not ready (the failing check's reason code), for the 409's detail. */
  channelReason?: (tenantId: string) => Promise<string | null>;
}

function inputFrom(request: SendNotificationRequest) {
  const fields = {
    clientName: request.clientName,
    businessName: request.businessName,
    serviceName: request.serviceName,
    when: request.when,
    newWhen: request.newWhen,
    message: request.message,
  };
  return {
    to: request.to,
    type: request.type,
    fields: Object.fromEntries(Object.entries(fields).filter(([, v]) => v !== undefined)),
    actor: request.actor && {
      actorReference: request.actor.actorReference,
      delegationReference: request.actor.delegationReference,
    },
    otherFields: request.otherFields,
  };
}

const answer = (stored: StoredSend, replayed: boolean): SendNotificationResponse => ({
  testingAllowance: undefined,
  notificationId: stored.notificationId,
  state: stored.state,
  type: stored.type,
  createdAt: stored.createdAt,
  replayed,
});

/** notify.v1.NotificationService: send a template notification exactly once; read transcripts. */
export function createNotificationService(
  deps: NotificationServiceDeps,
): UnaryHandlers<typeof NotificationServiceService> {
  /** A repeat of a claimed key: replay, refuse, or settle an abandoned send as unknown. Never sends. */
  async function answerRepeat(
    tenantId: string,
    key: string,
    fingerprint: string,
    logger: Logger,
    traceparent: string | undefined,
    depth = 0,
  ): Promise<SendNotificationResponse | "released"> {
    const decision = decideRepeat(await deps.store.findClaim(tenantId, key), fingerprint);
    switch (decision.kind) {
      case "claim_afresh":
        return "released"; // refused (or expired and purged) meanwhile: a fresh attempt
      case "key_reused":
        throw new IdempotencyKeyReusedError();
      case "replay":
        return answer(decision.result, true);
      case "outcome_unknown":
        throw new ActionOutcomeUnknownError();
      case "in_progress":
        throw new IdempotencyInProgressError();
      case "settle_abandoned":
        break;
    }
    const settled = await deps.store.settleAbandoned(tenantId, key, fingerprint, traceparent);
    if (settled) {
      logger.warn(
        { commandId: settled.notificationId },
        "a send abandoned between recording and its outcome was settled as unknown; the provider was not called again",
      );
      throw new ActionOutcomeUnknownError();
    }
    // Someone else settled or completed it meanwhile: read it again (bounded).
    if (depth >= 2) throw new IdempotencyInProgressError();
    return answerRepeat(tenantId, key, fingerprint, logger, traceparent, depth + 1);
  }

  async function dispatch(
    tenantId: string,
    key: string,
    notification: NotificationRequest,
    fingerprint: string,
    requestId: string,
    logger: Logger,
    traceparent: string | undefined,
    route: ChannelRoute | undefined,
  ): Promise<SendNotificationResponse | "claimed"> {
    const owner = randomUUID();
    const notificationId = newNotificationId();
    const text = renderNotification(notification);
    let recorded;
    try {
      recorded = await deps.store.record({
        tenantId,
        idempotencyKey: key,
        fingerprint,
        owner,
        notificationId,
        transcriptEntryId: newTranscriptEntryId(),
        recipient: notification.recipient,
        type: notification.type,
        text,
        actorReference: notification.actor.actorReference,
        delegationReference: notification.actor.delegationReference,
        requestId,
        leaseMs: deps.leaseMs,
        ttlMs: deps.ttlMs,
        testingAllowance: deps.testingAllowance,
        traceparent,
        pace: await deps.pace?.(tenantId, route),
      });
    } catch (error) {
      if (error instanceof DomainError) {
        // paced: over the number's throughput (domain/pacing.ts); refused: a precondition failed.
        const outcome = error instanceof ChannelPacedError ? "paced" : "refused";
        deps.metrics.notifications.inc({ type: notification.type, outcome });
        logger.info({ type: notification.type, code: error.code }, "notification refused");
      }
      throw error;
    }
    if (!recorded.recorded) return "claimed";

    const started = performance.now();
    // One client span around the provider call: ids, type, provider and outcome only (never the
    // recipient, the parameters or the text).
    const outcome = await inSpan(
      deps.tracer ?? noTracing.tracer,
      "notify.provider.send",
      traceparent,
      {
        kind: SpanKind.CLIENT,
        attributes: {
          "notify.notification.id": notificationId,
          "notify.notification.type": notification.type,
          "notify.provider.name": deps.provider.name,
        },
      },
      async (span) => {
        const outcome: ChannelOutcome = await deps.provider.send(
          {
            notificationId,
            recipient: notification.recipient,
            type: notification.type,
            parameters: renderParameters(notification),
            text,
          },
          route,
        );
        span.setAttribute("notify.send.outcome", outcome.kind);
        if (outcome.kind === "failed") span.setAttribute("notify.send.error_code", outcome.code);
        if (outcome.kind !== "sent") span.setStatus({ code: SpanStatusCode.ERROR, message: outcome.kind });
        return outcome;
      },
    );
    const providerMs = performance.now() - started;
    deps.metrics.providerSeconds.observe({ provider: deps.provider.name, outcome: outcome.kind }, providerMs / 1000);
    deps.metrics.notifications.inc({ type: notification.type, outcome: outcome.kind });

    const stored: StoredSend = {
      notificationId,
      state: outcome.kind === "sent" ? "sent" : "unknown",
      type: notification.type,
      createdAt: recorded.createdAt.toISOString(),
    };
    const line = {
      commandId: notificationId,
      type: notification.type,
      to: maskRecipient(notification.recipient),
      provider: deps.provider.name,
      outcome: outcome.kind,
      providerMs: Math.round(providerMs * 100) / 100,
      ...(outcome.kind === "failed" ? { code: outcome.code, providerCode: outcome.providerCode } : {}),
      ...(outcome.kind === "unknown" ? { reason: outcome.reason } : {}),
    };
    try {
      await deps.store.complete(
        { tenantId, idempotencyKey: key, owner, notificationId, traceparent },
        outcome,
        deps.provider.name,
        stored,
      );
    } catch (error) {
      // The provider answered but we could not record it: the partner must not treat it as sent
      // or safe to resend. A retry after the lease settles the key as unknown.
      logger.error({ ...line, err: error }, "notification outcome could not be recorded");
      throw new ActionOutcomeUnknownError();
    }
    logger.info(line, "notification dispatched");
    if (outcome.kind === "failed") throw refusalError(outcome.code);
    if (outcome.kind === "unknown") throw new ActionOutcomeUnknownError();
    const response = answer(stored, false);
    if (recorded.monthSends !== null) {
      response.testingAllowance = toProtoAllowance(
        allowanceView(deps.testingAllowance, stored.createdAt.slice(0, 7), recorded.monthSends),
      );
    }
    return response;
  }

  /** A channel_not_ready refusal names the failing check's reason code (code catalogue), when there is one. */
  async function withChannelReason(tenantId: string, error: unknown): Promise<unknown> {
    if (!(error instanceof DomainError) || error.code !== "partner.channel_not_ready" || !deps.channelReason) {
      return error;
    }
    const reason = await deps.channelReason(tenantId).catch(() => null);
    if (!reason) return error;
    return new ChannelNotReadyError(
      `the tenant's messaging channel cannot send right now (reason: ${reason}); nothing was sent. GET /capabilities has the check`,
    );
  }

  return {
    async sendNotification(request, { requestId, logger, traceparent }) {
      const tenantId = requireTenantId(request.tenantId);
      const notification = validateNotification(inputFrom(request));
      const key = request.idempotencyKey;
      const fingerprint = fingerprintOf(SEND_OPERATION, canonicalNotification(notification));
      // A released key (the first attempt was refused) is claimed afresh; bounded, never a spin.
      try {
        // The tenant's own number and token (a connected channel), read before anything is recorded.
        const route = await deps.channelRoute?.(tenantId);
        for (let attempt = 0; attempt < 3; attempt++) {
          const sent = await dispatch(tenantId, key, notification, fingerprint, requestId, logger, traceparent, route);
          if (sent !== "claimed") return sent;
          const repeat = await answerRepeat(tenantId, key, fingerprint, logger, traceparent);
          if (repeat !== "released") return repeat;
        }
      } catch (error) {
        throw await withChannelReason(tenantId, error);
      }
      throw new IdempotencyInProgressError();
    },

    async listConversationMessages(request) {
      const tenantId = requireTenantId(request.tenantId);
      const recipient = parseRecipient(request.to);
      const limit = resolvePageLimit(request.limit);
      const read = await deps.store.listTranscript(tenantId, recipient, limit + 1, decodeSeqCursor(request.cursor));
      const page = toSeqPage(read, limit);
      const messages: ConversationMessage[] = page.entries.map((entry) => ({
        // An inbound entry (a customer's STOP / START) has no notification: notificationId "".
        id: entry.id,
        notificationId: entry.notificationId,
        type: entry.type,
        text: entry.text,
        state: entry.state,
        actorReference: entry.actorReference,
        delegationReference: entry.delegationReference ?? undefined,
        createdAt: entry.createdAt.toISOString(),
        updatedAt: entry.updatedAt.toISOString(),
        deliveryStatus: entry.deliveryStatus ?? "",
      }));
      return { messages, nextCursor: page.nextCursor };
    },
  };
}

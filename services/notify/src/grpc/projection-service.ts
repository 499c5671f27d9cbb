import { ProjectionServiceService } from "@platform/proto/notify/v1/projections";
import type { UnaryHandlers } from "@platform/service-kit/grpc-server";
import type { Knex } from "@platform/service-kit/postgres";
import type { ProjectionReader } from "../db/projection-store.js";
import { decodeSeqCursor, encodeSeqCursor, resolvePageLimit } from "../domain/seq-page.js";
import { requireTenantId } from "../domain/tenant.js";
import type { RebuildResult } from "../events/projector.js";
import { notifyMutations } from "./notify-mutations.js";

/** limit 1-100 (0: the default) and an opaque cursor; anything else is `request.invalid`. */
export function pageRequest(request: { limit: number; cursor: string }): { limit: number; beforeSeq?: string } {
  return { limit: resolvePageLimit(request.limit), beforeSeq: decodeSeqCursor(request.cursor) };
}

const next = (seq: string | undefined): string => (seq === undefined ? "" : encodeSeqCursor(seq));

/** notify.v1.ProjectionService: the poll reads and their rebuild. */
export function createProjectionService(deps: {
  db: Knex;
  reader: ProjectionReader;
  /** Empties the projections and replays the stream into them, in `trx` (events/projector.ts). */
  rebuild: (trx: Knex.Transaction) => Promise<RebuildResult>;
}): UnaryHandlers<typeof ProjectionServiceService> {
  const declare = notifyMutations(deps);
  return {
    async listWork(request) {
      const { limit, beforeSeq } = pageRequest(request);
      const page = await deps.reader.listWork(requireTenantId(request.tenantId), limit, beforeSeq);
      return {
        items: page.items.map((item) => ({
          notificationId: item.notificationId,
          type: item.type,
          state: item.state,
          reasonCode: item.reasonCode,
          createdAt: item.createdAt.toISOString(),
          updatedAt: item.updatedAt.toISOString(),
        })),
        nextCursor: next(page.nextSeq),
      };
    },
    async listAttention(request) {
      const { limit, beforeSeq } = pageRequest(request);
      const page = await deps.reader.listAttention(requireTenantId(request.tenantId), limit, beforeSeq);
      return {
        items: page.items.map((item) => ({
          id: item.id,
          kind: item.kind,
          subjectId: item.subjectId,
          reasonCode: item.reasonCode,
          cause: item.cause,
          openedAt: item.openedAt.toISOString(),
          eventId: item.eventId,
        })),
        nextCursor: next(page.nextSeq),
      };
    },
    async listActivity(request) {
      const { limit, beforeSeq } = pageRequest(request);
      const page = await deps.reader.listActivity(requireTenantId(request.tenantId), limit, beforeSeq);
      return {
        items: page.items.map((item) => ({
          eventId: item.eventId,
          type: item.type,
          occurredAt: item.occurredAt.toISOString(),
          subjectKind: item.subjectKind,
          subjectId: item.subjectId,
          reasonCode: item.reasonCode,
          state: item.state,
          actor: item.actor,
        })),
        nextCursor: next(page.nextSeq),
      };
    },
    // The operator's: every tenant's projections at once, no key.
    rebuildProjections: declare(ProjectionServiceService.rebuildProjections, {
      tenant: false,
      once: false,
      effect: (trx) => deps.rebuild(trx),
      log: (result) => [{ ...result }, "projections rebuilt"],
      answer: (result) => ({
        eventsApplied: String(result.eventsApplied),
        lastSequence: String(result.lastSequence),
      }),
    }),
  };
}

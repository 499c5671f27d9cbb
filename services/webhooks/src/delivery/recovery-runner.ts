/**
 * The recovery runner: in every webhooks process, it claims a recovery nobody holds (a lease on
 * its row, WEBHOOKS_RECOVER_LEASE) and works through its items one transaction each, at most
 * WEBHOOKS_RECOVER_RATE redrives a second. Each item is redriven exactly as RedriveDelivery does
 * it (the endpoint and the delivery locked, domain `redrive`, a fresh run with a new generation,
 * the job enqueued after the commit), so its attempts are recorded in the ledger and signed at
 * send time. An item no longer redrivable when its turn comes (it succeeded meanwhile, or left
 * the retention) is skipped. Each transaction renews the lease: when the process dies, another
 * replica's runner takes the recovery over once the lease has run out and continues with the
 * items not done yet.
 */
import { randomBytes } from "node:crypto";
import type { Logger } from "@platform/service-kit/logger";
import type { Knex } from "@platform/service-kit/postgres";
import { createEndpointStore, type EndpointStore } from "../db/endpoint-store.js";
import { appendRecoveryFinished, type EndpointEvents } from "../db/endpoint-events.js";
import { createLedgerStore, deliveryState, type LedgerStore } from "../db/ledger-store.js";
import {
  claimRecovery,
  finishRecovery,
  lockHeldRecovery,
  nextRecoveryItem,
  recordRecoveryItem,
  releaseRecovery,
  type RecoveryRecord,
} from "../db/recovery-store.js";
import type { DeliveryJob, DeliveryQueue } from "../domain/delivery-job.js";
import {
  DeliveryNotFoundError,
  DeliveryNotRedrivableError,
  redrive,
  RedriveWindowClosedError,
} from "../domain/delivery-state.js";
import { EndpointNotFoundError } from "../domain/endpoint.js";
import { nextRedriveAt, recoverableStatuses } from "../domain/recovery.js";
import { every, type Periodic } from "./periodic.js";

export interface RecoveryRunnerOptions {
  db: Knex;
  queue: DeliveryQueue;
  logger: Logger;
  /** Redrives per second (WEBHOOKS_RECOVER_RATE). */
  ratePerSecond: number;
  /** How long a claim lasts without progress (WEBHOOKS_RECOVER_LEASE). */
  leaseMs: number;
  /** How often an idle runner looks for a recovery to take (WEBHOOKS_RECOVER_POLL_INTERVAL). */
  pollIntervalMs: number;
  /** The redrive window (WEBHOOKS_RETENTION). */
  retentionMs: number;
  events?: EndpointEvents;
  endpoints?: EndpointStore;
  ledger?: LedgerStore;
  clock?: () => Date;
}

type Step =
  | { kind: "lost" }
  | { kind: "finished"; recovery: RecoveryRecord }
  | { kind: "item"; outcome: "redriven" | "skipped"; job: DeliveryJob | undefined };

export function startRecoveryRunner(options: RecoveryRunnerOptions): Periodic {
  const { db, logger } = options;
  const clock = options.clock ?? (() => new Date());
  const endpoints = options.endpoints ?? createEndpointStore(db);
  const ledger = options.ledger ?? createLedgerStore(db);
  const owner = `runner-${randomBytes(8).toString("hex")}`;
  let stopping = false;
  let wake: (() => void) | undefined;

  const sleep = (ms: number) =>
    new Promise<void>((resolve) => {
      const timer = setTimeout(done, ms);
      function done() {
        clearTimeout(timer);
        wake = undefined;
        resolve();
      }
      wake = done;
    });

  /** One item of the recovery, or its end, in one transaction. */
  function step(recovery: RecoveryRecord, now: Date): Promise<Step> {
    return db.transaction(async (trx): Promise<Step> => {
      const held = await lockHeldRecovery(trx, recovery.id, owner);
      if (!held) return { kind: "lost" };
      const finish = async (outcome: { state: "completed" } | { state: "failed"; failureCode: string }) => {
        const finished = await finishRecovery(trx, held.id, outcome, now);
        if (options.events) await appendRecoveryFinished(trx, options.events.namespace, finished);
        return { kind: "finished", recovery: finished } as const;
      };
      const deliveryId = await nextRecoveryItem(trx, held.id);
      if (deliveryId === undefined) return finish({ state: "completed" });
      let endpoint;
      try {
        endpoint = await endpoints.lock(trx, held.tenantId, held.endpointId);
      } catch (error) {
        if (error instanceof EndpointNotFoundError)
          return finish({ state: "failed", failureCode: "webhook.recovery_endpoint_deleted" });
        throw error;
      }
      let outcome: "redriven" | "skipped" = "skipped";
      let job: DeliveryJob | undefined;
      try {
        // What RedriveDelivery does, for this one delivery.
        const delivery = await ledger.lock(trx, held.tenantId, endpoint.id, deliveryId);
        const state = redrive(deliveryState(delivery), {
          now,
          endpointPaused: endpoint.paused,
          windowMs: options.retentionMs,
          // A delivery that succeeded since the recovery was asked for is skipped, not resent.
          statuses: recoverableStatuses,
        });
        const restarted = await ledger.restart(trx, delivery.id, state, now);
        outcome = "redriven";
        if (restarted.status !== "held") job = { deliveryId: restarted.id, generation: restarted.generation };
      } catch (error) {
        const noLongerRedrivable =
          error instanceof DeliveryNotRedrivableError ||
          error instanceof RedriveWindowClosedError ||
          error instanceof DeliveryNotFoundError;
        if (!noLongerRedrivable) throw error;
      }
      await recordRecoveryItem(trx, { recoveryId: held.id, deliveryId, outcome, leaseMs: options.leaseMs, now });
      return { kind: "item", outcome, job };
    });
  }

  async function announce(job: DeliveryJob) {
    try {
      await options.queue.enqueue([job]);
    } catch (error) {
      logger.warn(
        { err: error, deliveryId: job.deliveryId },
        "enqueue after a recovery redrive failed; the sweeper will",
      );
    }
  }

  /** Works through the recovery until it ends, the lease is lost, or the runner stops. */
  async function run(recovery: RecoveryRecord) {
    const log = logger.child({ recoveryId: recovery.id, endpointId: recovery.endpointId });
    log.info({ total: recovery.total, done: recovery.redriven + recovery.skipped }, "recovery claimed");
    // Paced: each redrive at least 1/rate after the previous one began.
    let previousRedriveAt: number | undefined;
    for (;;) {
      const dueAt = nextRedriveAt(previousRedriveAt, options.ratePerSecond);
      // A timer may fire a millisecond early by the wall clock: wait until it is really due.
      while (!stopping && Date.now() < dueAt) await sleep(dueAt - Date.now());
      if (stopping) {
        await releaseRecovery(db, recovery.id, owner);
        log.info("recovery given back: the runner is stopping");
        return;
      }
      // The step's time is the redrive's (the item's done_at): the pacing is measured on it.
      const stepAt = clock();
      const result = await step(recovery, stepAt);
      if (result.kind === "lost") {
        log.warn("recovery lease lost to another runner; leaving it");
        return;
      }
      if (result.kind === "finished") {
        options.events?.kick();
        const { state, total, redriven, skipped, failureCode } = result.recovery;
        log.info({ state, total, redriven, skipped, failureCode }, "recovery finished");
        return;
      }
      if (result.outcome === "redriven") previousRedriveAt = stepAt.getTime();
      if (result.job) await announce(result.job);
    }
  }

  const periodic = every(options.pollIntervalMs, async () => {
    try {
      while (!stopping) {
        const recovery = await claimRecovery(db, owner, options.leaseMs);
        if (!recovery) return;
        await run(recovery);
      }
    } catch (error) {
      logger.warn({ err: error }, "running a recovery failed; its lease runs out and it is taken up again");
    }
  });

  return {
    async stop() {
      stopping = true;
      wake?.();
      await periodic.stop();
    },
  };
}

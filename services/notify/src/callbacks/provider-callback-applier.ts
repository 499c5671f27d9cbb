import type { Logger } from "@platform/service-kit/logger";
import type { ProviderCallbackStore } from "../db/provider-callback-store.js";
import { parseCallbackBody, readCallbacks, type NumberUpdateField } from "../domain/provider-callback.js";

/**
 * What a batch's entries other than statuses go to: the tenant's channel (inbound customer
 * messages, such as STOP; the number's quality and account updates feeding readiness). Both are
 * called inside the batch's application, after its statuses, once per entry; if either throws, the
 * whole batch is rolled back and applied again later, so they must be idempotent (a batch can be
 * applied more than once when a failure or a crash cuts an application short).
 */
export interface ProviderCallbackHandlers {
  inboundMessages(phoneNumberId: string, messages: unknown[]): Promise<void>;
  numberUpdate(change: { field: NumberUpdateField; value: unknown }): Promise<void>;
}

/** Until the channel wires its own: record nothing, say so at debug. */
export function loggingOnlyHandlers(logger: Logger): ProviderCallbackHandlers {
  return {
    inboundMessages(phoneNumberId, messages) {
      logger.debug({ phoneNumberId, messages: messages.length }, "inbound messages received; no channel handler");
      return Promise.resolve();
    },
    numberUpdate(change) {
      logger.debug({ field: change.field }, "number update received; no channel handler");
      return Promise.resolve();
    },
  };
}

export interface ProviderCallbackApplier {
  /** Applies one recorded batch now; never throws (a failure leaves it for the pass). */
  apply(batchId: string): Promise<"applied" | "skipped" | "failed">;
  /** One pass: pending statuses whose message is now recorded, then due unapplied batches. */
  pass(): Promise<void>;
  /** Runs the pass every `intervalMs` until stopped. */
  start(intervalMs: number): { stop(): Promise<void> };
}

export function createProviderCallbackApplier(deps: {
  store: ProviderCallbackStore;
  handlers: ProviderCallbackHandlers;
  logger: Logger;
  /** How long a batch whose application failed waits before the pass tries it again. */
  retryDelayMs: number;
}): ProviderCallbackApplier {
  const { store, handlers, logger } = deps;

  async function apply(batchId: string): Promise<"applied" | "skipped" | "failed"> {
    try {
      return await store.applyBatch(batchId, async (trx, batch) => {
        const callbacks = readCallbacks(parseCallbackBody(batch.body), batch.receivedAt);
        let written = 0;
        for (const status of callbacks.statuses) {
          written += await store.applyStatus(trx, batch.provider, status, batch.id);
        }
        for (const inbound of callbacks.inbound)
          await handlers.inboundMessages(inbound.phoneNumberId, inbound.messages);
        for (const update of callbacks.numberUpdates) await handlers.numberUpdate(update);
        return written;
      });
    } catch (error) {
      logger.warn({ err: error, batchId }, "a provider callback batch could not be applied; it is tried again later");
      await store
        .recordFailure(batchId, error instanceof Error ? error.message : String(error), deps.retryDelayMs)
        .catch((failure: unknown) =>
          logger.warn({ err: failure, batchId }, "the failed application could not be noted"),
        );
      return "failed";
    }
  }

  async function pass(): Promise<void> {
    // Bounded per pass; the next pass takes the rest.
    for (let round = 0; round < 10; round++) {
      if ((await store.applyPending(100)) < 100) break;
    }
    for (const batchId of await store.dueBatches(100)) await apply(batchId);
  }

  return {
    apply,
    pass,
    start(intervalMs) {
      let stopped = false;
      let running: Promise<void> = Promise.resolve();
      let timer: NodeJS.Timeout | undefined;
      const tick = () => {
        running = pass()
          .catch((error: unknown) => logger.warn({ err: error }, "provider callback pass failed; tried again"))
          .finally(() => {
            if (!stopped) timer = setTimeout(tick, intervalMs);
          });
      };
      timer = setTimeout(tick, intervalMs);
      return {
        async stop() {
          stopped = true;
          clearTimeout(timer);
          await running;
        },
      };
    },
  };
}

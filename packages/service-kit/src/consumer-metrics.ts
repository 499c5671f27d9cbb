/**
 * JetStream consumer lag gauges, from `consumer info` polled every `intervalMs` (never per scrape,
 * so a slow or absent NATS never slows /metrics):
 *
 *   jetstream_consumer_pending_messages{stream,consumer}       messages not yet delivered to it
 *   jetstream_consumer_ack_pending_messages{stream,consumer}   delivered and not acknowledged yet
 *   jetstream_consumer_max_ack_pending{stream,consumer}        its max_ack_pending (at that many
 *                                                               unacknowledged it receives nothing)
 *
 * While NATS is away the gauges keep their last values; the consumer's own loop logs the outage.
 * Every replica of a service reports the same durable consumer: aggregate with max by (stream,
 * consumer).
 */
import type { JetStreamClient } from "nats";
import type { Logger } from "pino";
import { Gauge, type Registry } from "prom-client";

export interface ConsumerRef {
  stream: string;
  consumer: string;
}

export interface ConsumerLagMetrics {
  /** One poll of every consumer now (the timer also calls it). */
  poll(): Promise<void>;
  stop(): void;
}

export function startConsumerLagMetrics(options: {
  registry: Registry;
  js: JetStreamClient;
  consumers: ConsumerRef[];
  logger: Logger;
  intervalMs?: number;
}): ConsumerLagMetrics {
  const labelNames = ["stream", "consumer"] as const;
  const pending = new Gauge({
    name: "jetstream_consumer_pending_messages",
    help: "Messages of the stream not yet delivered to the durable consumer (num_pending).",
    labelNames,
    registers: [options.registry],
  });
  const ackPending = new Gauge({
    name: "jetstream_consumer_ack_pending_messages",
    help: "Messages delivered to the durable consumer and not acknowledged yet (num_ack_pending).",
    labelNames,
    registers: [options.registry],
  });
  const maxAckPending = new Gauge({
    name: "jetstream_consumer_max_ack_pending",
    help: "The durable consumer's max_ack_pending: with that many unacknowledged it is delivered nothing new.",
    labelNames,
    registers: [options.registry],
  });
  let failing = false;
  let stopped = false;
  async function poll(): Promise<void> {
    try {
      const jsm = await options.js.jetstreamManager();
      for (const { stream, consumer } of options.consumers) {
        const info = await jsm.consumers.info(stream, consumer);
        pending.set({ stream, consumer }, info.num_pending);
        ackPending.set({ stream, consumer }, info.num_ack_pending);
        maxAckPending.set({ stream, consumer }, info.config.max_ack_pending ?? -1);
      }
      failing = false;
    } catch (error) {
      // A poll that outlived stop() failed on the drained connection: nothing to report.
      if (!failing && !stopped)
        options.logger.warn(
          { err: error },
          "reading JetStream consumer info failed; lag gauges keep their last values",
        );
      failing = true;
    }
  }
  let polling: Promise<void> | undefined;
  const tick = () => {
    polling ??= poll().finally(() => (polling = undefined));
  };
  tick();
  const timer = setInterval(tick, options.intervalMs ?? 15_000);
  timer.unref();
  return {
    poll,
    stop() {
      stopped = true;
      clearInterval(timer);
    },
  };
}

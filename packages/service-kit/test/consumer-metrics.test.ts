import { newNatsNamespace, testNatsUrl } from "@platform/local-stack/nats-namespace";
import { AckPolicy, connect, StorageType, type JetStreamManager, type NatsConnection } from "nats";
import { Registry } from "prom-client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startConsumerLagMetrics, type ConsumerLagMetrics } from "../src/consumer-metrics.js";
import { createLogger } from "../src/logger.js";
import { ensureDurableConsumer, ensureStream } from "../src/nats.js";

/** The samples of one metric as `labels -> value`, from the text exposition. */
async function samples(registry: Registry, name: string): Promise<Record<string, number>> {
  const found: Record<string, number> = {};
  for (const line of (await registry.metrics()).split("\n")) {
    const match = new RegExp(`^${name}\\{([^}]*)\\} (\\S+)$`).exec(line);
    if (match) found[match[1]!] = Number(match[2]);
  }
  return found;
}

describe("JetStream consumer lag gauges (real NATS)", () => {
  let nc: NatsConnection;
  let jsm: JetStreamManager;
  let metrics: ConsumerLagMetrics | undefined;
  const ns = newNatsNamespace();
  const stream = `${ns}LAG`;
  const registry = new Registry();
  const labels = `stream="${stream}",consumer="lagging"`;

  beforeAll(async () => {
    nc = await connect({ servers: testNatsUrl() });
    jsm = await nc.jetstreamManager();
    await ensureStream(jsm, { name: stream, subjects: [`${ns}lag.>`], storage: StorageType.Memory });
    await ensureDurableConsumer(jsm, stream, {
      durable_name: "lagging",
      ack_policy: AckPolicy.Explicit,
      max_ack_pending: 50,
    });
  });
  afterAll(async () => {
    metrics?.stop();
    await jsm?.streams.delete(stream).catch(() => undefined);
    await nc?.close();
  });

  it("report pending, ack-pending and max_ack_pending of each named durable consumer", async () => {
    const js = nc.jetstream();
    for (let i = 0; i < 7; i++) await js.publish(`${ns}lag.x`, new Uint8Array([i]));
    metrics = startConsumerLagMetrics({
      registry,
      js,
      consumers: [{ stream, consumer: "lagging" }],
      logger: createLogger("test", "silent"),
      intervalMs: 60_000,
    });
    await metrics.poll();
    expect(await samples(registry, "jetstream_consumer_pending_messages")).toEqual({ [labels]: 7 });
    expect(await samples(registry, "jetstream_consumer_ack_pending_messages")).toEqual({ [labels]: 0 });
    expect(await samples(registry, "jetstream_consumer_max_ack_pending")).toEqual({ [labels]: 50 });

    // Three delivered, one of them acknowledged: 4 pending, 2 awaiting their ack.
    const consumer = await js.consumers.get(stream, "lagging");
    const batch = await consumer.fetch({ max_messages: 3, expires: 2_000 });
    let n = 0;
    for await (const message of batch) if (n++ === 0) await message.ackAck();
    await metrics.poll();
    expect(await samples(registry, "jetstream_consumer_pending_messages")).toEqual({ [labels]: 4 });
    expect(await samples(registry, "jetstream_consumer_ack_pending_messages")).toEqual({ [labels]: 2 });
  });

  it("keep the last values when the consumer cannot be read", async () => {
    await jsm.consumers.delete(stream, "lagging");
    await metrics!.poll();
    expect(await samples(registry, "jetstream_consumer_pending_messages")).toEqual({ [labels]: 4 });
  });
});

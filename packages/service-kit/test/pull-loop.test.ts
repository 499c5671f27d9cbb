/**
 * startPullLoop's stop against a real nats-server, with an ack wait (60 s) far beyond any bound
 * below: a message the stopping loop held but never handled must reach another loop at once, not
 * after the ack wait. About 2 s.
 */
import { newNatsNamespace, testNatsUrl } from "@platform/local-stack/nats-namespace";
import { AckPolicy, connect, nanos, StorageType, type JetStreamManager, type JsMsg, type NatsConnection } from "nats";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createLogger } from "../src/logger.js";
import { ensureDurableConsumer, ensureStream, startPullLoop, type PullLoop } from "../src/nats.js";

const ACK_WAIT_MS = 60_000;
/** Far below the ack wait, far above a redelivery on a loaded machine. */
const AT_ONCE_MS = 10_000;

describe("a pull loop stopped while it holds fetched messages (real NATS)", () => {
  let nc: NatsConnection;
  let jsm: JetStreamManager;
  const ns = newNatsNamespace();
  const stream = `${ns}WORK`;
  const loops: PullLoop[] = [];
  const logger = createLogger("test", "silent");

  beforeAll(async () => {
    nc = await connect({ servers: testNatsUrl() });
    jsm = await nc.jetstreamManager();
    await ensureStream(jsm, { name: stream, subjects: [`${ns}work.>`], storage: StorageType.Memory });
  });
  afterAll(async () => {
    await Promise.all(loops.map((l) => l.stop()));
    await jsm?.streams.delete(stream).catch(() => undefined);
    await nc?.close();
  });

  const declare = (durable: string) =>
    ensureDurableConsumer(jsm, stream, {
      durable_name: durable,
      ack_policy: AckPolicy.Explicit,
      ack_wait: nanos(ACK_WAIT_MS),
      max_deliver: -1,
      filter_subject: `${ns}work.${durable}`,
    });
  /** `n` messages whose one byte is their index (0, 1, ...): sequence numbers are the stream's. */
  const publish = async (durable: string, n: number) => {
    const js = nc.jetstream();
    for (let i = 0; i < n; i++) await js.publish(`${ns}work.${durable}`, new Uint8Array([i]));
  };
  /** A loop that handles one message at a time (as the projector applies one batch at a time). */
  const start = (durable: string, handle: (msg: JsMsg) => Promise<void>, expiresMs = 5_000) => {
    const loop = startPullLoop({
      js: nc.jetstream(),
      stream,
      consumer: durable,
      batchSize: 10,
      expiresMs,
      logger,
      what: "work",
      async onMessages(messages) {
        for await (const msg of messages) await handle(msg);
      },
    });
    loops.push(loop);
    return loop;
  };

  it("finishes the message it is handling and gives back the nine it had buffered, which another loop handles at once", async () => {
    await declare("held");
    await publish("held", 10);
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    const first: number[] = [];
    const firstLoop = start("held", async (msg) => {
      first.push(msg.data[0]!);
      await released;
      msg.ack();
    });
    // The first loop handles one message and holds the nine others of its fetch, unacked.
    await expect.poll(() => first.length).toBe(1);
    await expect.poll(async () => (await jsm.consumers.info(stream, "held")).num_ack_pending).toBe(10);

    const stopping = firstLoop.stop();
    const second: number[] = [];
    const startedAt = performance.now();
    start("held", (msg) => {
      second.push(msg.data[0]!);
      msg.ack();
      return Promise.resolve();
    });
    // While the first loop is still busy with its message, the nine are already the second's.
    await expect.poll(() => second.length, { timeout: AT_ONCE_MS }).toBe(9);
    expect(performance.now() - startedAt).toBeLessThan(AT_ONCE_MS);
    expect(first).toEqual([0]);
    expect(second.sort((a, b) => a - b)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9]);

    release();
    await stopping;
    expect(first).toEqual([0]);
    // An ack is a plain publish the server applies on its own time: poll until all ten are settled.
    await expect
      .poll(async () => {
        const info = await jsm.consumers.info(stream, "held");
        return [info.num_pending, info.num_ack_pending];
      })
      .toEqual([0, 0]);
  });

  it("stopped while its fetch waits on an empty stream, ends at once and leaves no pull request behind to swallow the next message", async () => {
    await declare("idle");
    const idle = start("idle", () => Promise.reject(new Error("the stopped loop got a message")), 30_000);
    await expect.poll(async () => (await jsm.consumers.info(stream, "idle")).num_waiting).toBe(1);
    const stoppedAt = performance.now();
    await idle.stop();
    expect(performance.now() - stoppedAt).toBeLessThan(AT_ONCE_MS);

    const handled: number[] = [];
    start("idle", (msg) => {
      handled.push(msg.data[0]!);
      msg.ack();
      return Promise.resolve();
    });
    await publish("idle", 1);
    await expect.poll(() => handled.length, { timeout: AT_ONCE_MS }).toBe(1);
  });

  it("whose handler throws, gives back the rest of that fetch at once and handles it on its next fetch", async () => {
    await declare("throws");
    await publish("throws", 10);
    const handled: number[] = [];
    start("throws", (msg) => {
      if (msg.data[0] === 0) return Promise.reject(new Error("a handler that throws (message 0 stays unanswered)"));
      handled.push(msg.data[0]!);
      msg.ack();
      return Promise.resolve();
    });
    await expect.poll(() => handled.length, { timeout: AT_ONCE_MS }).toBe(9);
    expect(handled.sort((a, b) => a - b)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9]);
  });
});

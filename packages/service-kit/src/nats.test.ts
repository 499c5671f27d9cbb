/**
 * startPullLoop's slot accounting against a fake consumer (no NATS): what each fetch asks for, and
 * when the loop fetches at all. Its stop against a real nats-server: test/pull-loop.test.ts.
 */
import type { ConsumerMessages, JetStreamClient, JsMsg } from "nats";
import { afterEach, describe, expect, it } from "vitest";
import { createLogger } from "./logger.js";
import { startPullLoop, type PullLoop, type PullLoopOptions } from "./nats.js";

/**
 * A consumer whose fetches hand out the queued messages (as many as asked for) and end, or, with
 * none queued, wait like a pull request until their expiry (here: until stopped).
 */
function fakeConsumer() {
  const queued: JsMsg[] = [];
  const asked: number[] = [];
  let fetched!: () => void;
  let nextFetch = new Promise<void>((resolve) => (fetched = resolve));
  const consumer = {
    fetch({ max_messages }: { max_messages: number }): Promise<ConsumerMessages> {
      asked.push(max_messages);
      fetched();
      nextFetch = new Promise<void>((resolve) => (fetched = resolve));
      const batch = queued.splice(0, max_messages);
      let stop!: () => void;
      const stopped = new Promise<void>((resolve) => (stop = resolve));
      const messages = {
        stop,
        async *[Symbol.asyncIterator]() {
          yield* batch;
          if (batch.length === 0) await stopped;
        },
      };
      return Promise.resolve(messages as unknown as ConsumerMessages);
    },
  };
  const js = { consumers: { get: () => Promise.resolve(consumer) } } as unknown as JetStreamClient;
  return {
    js,
    /** How many messages each fetch asked for, in order. */
    asked,
    publish(n: number) {
      for (let i = 0; i < n; i++) queued.push({ seq: queued.length + 1 } as unknown as JsMsg);
    },
    /** Resolves at the next fetch. */
    nextFetch: () => nextFetch,
  };
}

/** Lets every pending promise of the loop settle (the fake answers at once). */
const settle = () => new Promise<void>((resolve) => setImmediate(resolve));

describe("a pull loop with free slots (fake consumer)", () => {
  const loops: PullLoop[] = [];
  afterEach(async () => {
    await Promise.all(loops.splice(0).map((loop) => loop.stop()));
  });

  function start(
    fake: ReturnType<typeof fakeConsumer>,
    options: Partial<PullLoopOptions> & Pick<PullLoopOptions, "onMessages">,
  ) {
    const loop = startPullLoop({
      js: fake.js,
      stream: "S",
      consumer: "C",
      batchSize: 8,
      expiresMs: 5_000,
      logger: createLogger("test", "silent"),
      what: "work",
      ...options,
    });
    loops.push(loop);
    return loop;
  }

  it("asks each fetch for no more than the free slots, and fetches nothing while none is free until a slot is freed", async () => {
    const fake = fakeConsumer();
    fake.publish(10);
    // Five of eight slots are taken.
    const held = Array.from({ length: 5 }, () => ({}) as JsMsg);
    const loop = start(fake, {
      freeSlots: () => 8 - held.length,
      async onMessages(messages) {
        for await (const msg of messages) held.push(msg);
      },
    });
    await settle();
    // Three free: one fetch of three, then every slot is taken and the loop waits.
    expect(fake.asked).toEqual([3]);
    expect(held).toHaveLength(8);
    await settle();
    expect(fake.asked).toEqual([3]);

    held.splice(0, 2);
    const next = fake.nextFetch();
    loop.slotFreed();
    await next;
    await settle();
    expect(fake.asked).toEqual([3, 2]);
    expect(held).toHaveLength(8);
  });

  it("never asks for more than batchSize, however many slots are free", async () => {
    const fake = fakeConsumer();
    start(fake, { batchSize: 4, freeSlots: () => 100, onMessages: () => Promise.resolve() });
    await fake.nextFetch();
    expect(fake.asked).toEqual([4]);
  });

  it("stopped while it waits for a slot, ends without fetching again", async () => {
    const fake = fakeConsumer();
    fake.publish(2);
    const held: JsMsg[] = [];
    const loop = start(fake, {
      freeSlots: () => 2 - held.length,
      async onMessages(messages) {
        for await (const msg of messages) held.push(msg);
      },
    });
    await settle();
    expect(fake.asked).toEqual([2]);
    await loop.stop();
    expect(fake.asked).toEqual([2]);
  });

  it("without free slots asks every fetch for batchSize, and slotFreed does nothing", async () => {
    const fake = fakeConsumer();
    fake.publish(3);
    const handled: JsMsg[] = [];
    const loop = start(fake, {
      async onMessages(messages) {
        for await (const msg of messages) handled.push(msg);
      },
    });
    await settle();
    loop.slotFreed();
    expect(handled).toHaveLength(3);
    expect(fake.asked).toEqual([8, 8]);
  });
});

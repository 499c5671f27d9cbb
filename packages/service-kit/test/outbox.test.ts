import { newNatsNamespace } from "@platform/local-stack/nats-namespace";
import { createScratchDatabase, type ScratchDatabase } from "@platform/local-stack/postgres-databases";
import { connect, StorageType, type JetStreamManager, type NatsConnection } from "nats";
import { Registry } from "prom-client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createLogger } from "../src/logger.js";
import { ensureDurableConsumer, ensureStream, nanos } from "../src/nats.js";
import {
  addOutboxPublishedAt,
  addOutboxTraceparent,
  appendToOutbox,
  consumeFromOutbox,
  createOutboxTable,
  publishAfterCommit,
  startOutboxRelay,
  type OutboxRelay,
} from "../src/outbox.js";
import { createDatabase, type Knex } from "../src/postgres.js";

const SCHEMA = "outbox_test";

async function eventually<T>(what: string, probe: () => Promise<T | undefined | false>, timeoutMs = 20_000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined && value !== false) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

describe("the outbox and its relay (real Postgres and NATS)", () => {
  let scratch: ScratchDatabase;
  let db: Knex;
  let nc: NatsConnection;
  let jsm: JetStreamManager;
  let relay: OutboxRelay | undefined;
  const ns = newNatsNamespace();
  const stream = `${ns}KIT`;
  const lateStream = `${ns}KIT_LATE`;
  const registry = new Registry();

  beforeAll(async () => {
    scratch = await createScratchDatabase("outbox");
    db = createDatabase({ url: scratch.url, schema: SCHEMA, poolMax: 4 });
    await db.raw("create schema ??", [SCHEMA]);
    await createOutboxTable(db);
    await addOutboxTraceparent(db);
    nc = await connect({ servers: process.env.NATS_URL ?? "nats://127.0.0.1:4222" });
    jsm = await nc.jetstreamManager();
  });
  afterAll(async () => {
    await relay?.stop();
    for (const name of [stream, lateStream]) await jsm?.streams.delete(name).catch(() => undefined);
    await nc?.close();
    await db?.destroy();
    await scratch?.drop();
  });

  it("declares streams and durable consumers idempotently, updating what changed", async () => {
    const config = {
      name: stream,
      subjects: [`${ns}kit.>`],
      storage: StorageType.File,
      duplicate_window: nanos(120_000),
    };
    await ensureStream(jsm, { ...config, max_age: nanos(3_600_000) });
    await ensureStream(jsm, { ...config, max_age: nanos(7_200_000) });
    expect((await jsm.streams.info(stream)).config.max_age).toBe(nanos(7_200_000));
    await ensureDurableConsumer(jsm, stream, { durable_name: "reader", ack_wait: nanos(10_000) });
    await ensureDurableConsumer(jsm, stream, { durable_name: "reader", ack_wait: nanos(20_000) });
    expect((await jsm.consumers.info(stream, "reader")).config.ack_wait).toBe(nanos(20_000));
  });

  it("names NATS_STREAM_REPLICAS when a single server refuses a replica count above 1, for a new stream and an existing one", async () => {
    const refused = /NATS_STREAM_REPLICAS=3 refused by NATS \(.+\); a count above 1 needs a JetStream cluster/;
    const fresh = { name: `${ns}KIT_R3`, subjects: [`${ns}kitr3.>`], storage: StorageType.File, num_replicas: 3 };
    await expect(ensureStream(jsm, fresh)).rejects.toThrow(refused);
    await expect(jsm.streams.info(fresh.name)).rejects.toThrow(/not found/);
    await expect(ensureStream(jsm, { name: stream, num_replicas: 3 })).rejects.toThrow(refused);
    expect((await jsm.streams.info(stream)).config.num_replicas).toBe(1);
  });

  it("appends only with the transaction, once per event id", async () => {
    await db
      .transaction(async (trx) => {
        expect(await appendToOutbox(trx, { eventId: "e0", subject: `${ns}kit.a`, payload: Buffer.from("x") })).toBe(
          true,
        );
        throw new Error("roll back");
      })
      .catch(() => undefined);
    expect(await db("outbox").count<{ count: string }[]>()).toEqual([{ count: "0" }]);
    await db.transaction(async (trx) => {
      expect(await appendToOutbox(trx, { eventId: "e1", subject: `${ns}kit.a`, payload: Buffer.from("one") })).toBe(
        true,
      );
      expect(await appendToOutbox(trx, { eventId: "e1", subject: `${ns}kit.a`, payload: Buffer.from("again") })).toBe(
        false,
      );
    });
  });

  it("publishes with the event id as Nats-Msg-Id when kicked, deletes what the stream stored", async () => {
    await db.transaction((trx) =>
      appendToOutbox(trx, { eventId: "e2", subject: `${ns}kit.b`, payload: Buffer.from("two") }),
    );
    relay = startOutboxRelay({
      db,
      js: nc.jetstream(),
      logger: createLogger("test", "silent"),
      pollIntervalMs: 60_000,
      registry,
      metricPrefix: "kit",
    });
    relay.kick();
    await eventually(
      "the outbox drained",
      async () => Number((await db("outbox").count<{ count: string }[]>())[0]!.count) === 0,
    );
    const first = await jsm.streams.getMessage(stream, { seq: 1 });
    const second = await jsm.streams.getMessage(stream, { seq: 2 });
    expect([first.header.get("Nats-Msg-Id"), Buffer.from(first.data).toString()]).toEqual(["e1", "one"]);
    expect([second.header.get("Nats-Msg-Id"), Buffer.from(second.data).toString()]).toEqual(["e2", "two"]);

    // A republish of the same event (a crash between publish and delete) is dropped by the stream.
    await db.transaction((trx) =>
      appendToOutbox(trx, { eventId: "e2", subject: `${ns}kit.b`, payload: Buffer.from("two") }),
    );
    relay.kick();
    await eventually(
      "the outbox drained again",
      async () => Number((await db("outbox").count<{ count: string }[]>())[0]!.count) === 0,
    );
    expect((await jsm.streams.info(stream)).state.messages).toBe(2);
    const metrics = await registry.metrics();
    expect(metrics).toMatch(/^kit_outbox_published_total 3$/m);
    expect(metrics).toMatch(/^kit_outbox_lag_seconds 0$/m);
  });

  it("keeps what it cannot publish and retries until the stream accepts it", async () => {
    await db.transaction((trx) =>
      appendToOutbox(trx, { eventId: "late", subject: `${ns}late.x`, payload: Buffer.from("late") }),
    );
    relay!.kick();
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    expect(await db("outbox").pluck("event_id")).toEqual(["late"]);
    expect(Number(/^kit_outbox_lag_seconds (\S+)$/m.exec(await registry.metrics())![1])).toBeGreaterThan(0.5);
    await jsm.streams.add({ name: lateStream, subjects: [`${ns}late.>`], storage: StorageType.File });
    await eventually("the late event published", async () => (await db("outbox").pluck("event_id")).length === 0);
    expect((await jsm.streams.info(lateStream)).state.messages).toBe(1);
  });

  it("with a gather window, publishes a kick after a quiet spell at once and the kicks that follow together", async () => {
    await relay!.stop();
    relay = startOutboxRelay({
      db,
      js: nc.jetstream(),
      logger: createLogger("test", "silent"),
      pollIntervalMs: 60_000,
      gatherMs: 1_500,
    });
    // Its first pass (at start) opens a window; let it pass.
    await new Promise((resolve) => setTimeout(resolve, 1_600));
    const append = (eventId: string) =>
      db.transaction((trx) => appendToOutbox(trx, { eventId, subject: `${ns}kit.g`, payload: Buffer.from(eventId) }));
    const before = (await jsm.streams.info(stream)).state.messages;
    await append("g1");
    const kicked = Date.now();
    relay.kick();
    await eventually("the first event published", async () => (await db("outbox").pluck("event_id")).length === 0);
    expect(Date.now() - kicked).toBeLessThan(1_000);
    await append("g2");
    relay.kick();
    await append("g3");
    relay.kick();
    await new Promise((resolve) => setTimeout(resolve, 300));
    // Within the window of the first pass: both wait, for one pass.
    expect((await db("outbox").orderBy("seq").pluck("event_id")).sort()).toEqual(["g2", "g3"]);
    await eventually("the gathered events published", async () => (await db("outbox").pluck("event_id")).length === 0);
    expect((await jsm.streams.info(stream)).state.messages).toBe(before + 3);
    // stop() does not wait out a window.
    await append("g4");
    relay.kick();
    const stopping = Date.now();
    await relay.stop();
    expect(Date.now() - stopping).toBeLessThan(1_000);
    relay = undefined;
  });
});

describe("an outbox kept until its consumer removes the event (real Postgres and NATS)", () => {
  let scratch: ScratchDatabase;
  let db: Knex;
  let nc: NatsConnection;
  let jsm: JetStreamManager;
  let relay: OutboxRelay | undefined;
  const ns = newNatsNamespace();
  const stream = `${ns}KEPT`;
  const declare = () => jsm.streams.add({ name: stream, subjects: [`${ns}kept.>`], storage: StorageType.File });
  const messages = async () => (await jsm.streams.info(stream)).state.messages;

  beforeAll(async () => {
    scratch = await createScratchDatabase("outboxkept");
    db = createDatabase({ url: scratch.url, schema: SCHEMA, poolMax: 4 });
    await db.raw("create schema ??", [SCHEMA]);
    await createOutboxTable(db);
    await addOutboxPublishedAt(db);
    await addOutboxTraceparent(db);
    nc = await connect({ servers: process.env.NATS_URL ?? "nats://127.0.0.1:4222" });
    jsm = await nc.jetstreamManager();
    await declare();
  });
  afterAll(async () => {
    await relay?.stop();
    await jsm?.streams.delete(stream).catch(() => undefined);
    await nc?.close();
    await db?.destroy();
    await scratch?.drop();
  });

  it("marks a published row, publishes it again while it is there, and stops once it is consumed", async () => {
    relay = startOutboxRelay({
      db,
      js: nc.jetstream(),
      logger: createLogger("test", "silent"),
      pollIntervalMs: 100,
      republishAfterMs: 1_000,
    });
    await db.transaction((trx) =>
      appendToOutbox(trx, { eventId: "k1", subject: `${ns}kept.a`, payload: Buffer.from("one") }),
    );
    relay.kick();
    await eventually("the event published", async () => (await messages()) === 1);
    const row = await db("outbox").where({ event_id: "k1" }).first<{ published_at: Date | null }>("published_at");
    expect(row.published_at).toBeInstanceOf(Date);

    // The server lost its store: the stream is back empty, and the event is published again.
    await jsm.streams.delete(stream);
    await declare();
    await eventually("the event published again", async () => (await messages()) === 1, 10_000);

    // The consumer recorded it: the row goes, nothing more is published.
    await consumeFromOutbox(db, "k1");
    await jsm.streams.purge(stream);
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    expect(await messages()).toBe(0);
    expect(await db("outbox").count<{ count: string }[]>()).toEqual([{ count: "0" }]);
  });

  /** A row written as the send path writes it: already marked published. */
  const insertMarked = (eventId: string, payload: string) =>
    db("outbox").insert({
      event_id: eventId,
      subject: `${ns}kept.b`,
      payload: Buffer.from(payload),
      published_at: db.fn.now(),
      traceparent: "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01",
    });

  it("publishes a committed row marked published at once (a plain message the stream captures), with no relay pass, and the relay leaves it alone", async () => {
    await relay?.stop();
    await jsm.streams.purge(stream);
    let kicks = 0;
    const relayRegistry = new Registry();
    // A relay polling every 100 ms that would publish anything unmarked or marked over 60 s ago.
    relay = startOutboxRelay({
      db,
      js: nc.jetstream(),
      logger: createLogger("test", "silent"),
      pollIntervalMs: 100,
      republishAfterMs: 60_000,
      registry: relayRegistry,
      metricPrefix: "atonce",
    });
    const atOnce = publishAfterCommit({
      db,
      nc,
      relay: { kick: () => kicks++ },
      logger: createLogger("test", "silent"),
    });
    await insertMarked("at-once-1", "first");
    atOnce.publish({
      eventId: "at-once-1",
      subject: `${ns}kept.b`,
      payload: Buffer.from("first"),
      traceparent: "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01",
    });
    await eventually("the event published", async () => (await messages()) === 1);
    // The same entry again (a writer's retry): the stream's duplicate window drops it by its Nats-Msg-Id.
    atOnce.publish({ eventId: "at-once-1", subject: `${ns}kept.b`, payload: Buffer.from("first") });
    // A second of relay passes later, still one message: the relay did not take the marked row.
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    expect(await messages()).toBe(1);
    const stored = await jsm.streams.getMessage(stream, { last_by_subj: `${ns}kept.b` });
    expect(stored.header.get("Nats-Msg-Id")).toBe("at-once-1");
    expect(stored.header.get("traceparent")).toBe("00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01");
    expect(new TextDecoder().decode(stored.data)).toBe("first");
    expect(kicks).toBe(0);
    // (The stream's duplicate window would hide a second publish: the relay's own count says none.)
    expect(await relayRegistry.getSingleMetricAsString("atonce_outbox_published_total")).toMatch(/ 0$/m);
    const row = await db("outbox")
      .where({ event_id: "at-once-1" })
      .first<{ published_at: Date | null }>("published_at");
    expect(row.published_at).toBeInstanceOf(Date);
    await consumeFromOutbox(db, "at-once-1");
  });

  it("when publishing at once fails, clears the row's mark and kicks the relay, which publishes it", async () => {
    await jsm.streams.purge(stream);
    let kicked = 0;
    // A connection that refuses the publish at once (closed, or draining for a shutdown).
    const failing = {
      publish: () => {
        throw new Error("CONNECTION_CLOSED");
      },
    };
    const atOnce = publishAfterCommit({
      db,
      nc: failing,
      relay: {
        kick: () => {
          kicked++;
          relay!.kick();
        },
      },
      logger: createLogger("test", "silent"),
    });
    await insertMarked("at-once-2", "second");
    atOnce.publish({ eventId: "at-once-2", subject: `${ns}kept.b`, payload: Buffer.from("second") });
    await eventually("the relay kicked", () => Promise.resolve(kicked === 1));
    // The mark was cleared before the kick, so the relay's pass took the row and published it.
    await eventually("the event published by the relay", async () => (await messages()) === 1, 5_000);
    const stored = await jsm.streams.getMessage(stream, { last_by_subj: `${ns}kept.b` });
    expect(stored.header.get("Nats-Msg-Id")).toBe("at-once-2");
    await consumeFromOutbox(db, "at-once-2");
  });

  it("with a gather window, publishes the entries handed over within it together, at its end or on flush", async () => {
    await jsm.streams.purge(stream);
    const atOnce = publishAfterCommit({
      db,
      nc,
      relay: { kick: () => undefined },
      logger: createLogger("test", "silent"),
      gatherMs: 2_000,
    });
    const entry = (id: string) => ({ eventId: id, subject: `${ns}kept.c`, payload: Buffer.from(id) });
    const started = performance.now();
    for (const id of ["g1", "g2", "g3"]) atOnce.publish(entry(id));
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(await messages()).toBe(0); // still in the window
    await eventually("the window's three published", async () => (await messages()) === 3, 5_000);
    expect(performance.now() - started).toBeGreaterThanOrEqual(1_990);
    // A shutdown's flush publishes what the window holds without waiting for its end.
    atOnce.publish(entry("g4"));
    atOnce.flush();
    await eventually("the flushed one published", async () => (await messages()) === 4, 1_500);
  });
});

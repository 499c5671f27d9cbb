/**
 * The NATS connection every service opens, and idempotent declarations of the JetStream streams
 * and durable pull consumers it uses (add, or update when it exists), run at every start.
 */
import {
  connect,
  type Consumer,
  type ConsumerConfig,
  type ConsumerMessages,
  type JetStreamClient,
  type JetStreamManager,
  type JsMsg,
  type NatsConnection,
  type StreamConfig,
  type Subscription,
} from "nats";
import type { Logger } from "pino";
import { failureBackoffMs } from "./backoff.js";

export { nanos } from "nats";

/**
 * Connects and keeps reconnecting forever (every 500 ms) when the server goes away; every status
 * change (disconnect, reconnect, errors) is logged. The first connection is retried for up to
 * `connectTimeoutMs` so a service may start before NATS.
 */
export async function connectNats(options: {
  servers: string;
  name: string;
  logger: Logger;
  connectTimeoutMs?: number;
  /**
   * Declares the service's streams and consumers: once the connection is up (a failure fails the
   * start), and again after every reconnect, retried until it succeeds, since a server that lost
   * its store (a fresh volume) has none of them and nothing would be published or consumed.
   */
  declare?: (jsm: JetStreamManager) => Promise<void>;
}): Promise<NatsConnection> {
  const deadline = Date.now() + (options.connectTimeoutMs ?? 30_000);
  let connection: NatsConnection | undefined;
  for (let attempt = 0; connection === undefined; attempt++) {
    try {
      connection = await connect({
        servers: options.servers.split(",").map((server) => server.trim()),
        name: options.name,
        maxReconnectAttempts: -1,
        reconnectTimeWait: 500,
        // No stack captured up front per request or JetStream publish for the error it would raise
        // on a timeout (the error still comes, without the caller's frames): building an Error and
        // a NatsError per publish was 1.2% of notify's CPU (issue 19), and every service publishes
        // on its hot path.
        noAsyncTraces: true,
      });
    } catch (error) {
      if (Date.now() > deadline) throw error;
      options.logger.warn({ err: error, attempt }, "NATS is not reachable yet; retrying");
      await new Promise((resolve) => setTimeout(resolve, Math.min(2_000, 100 * 2 ** attempt)));
    }
  }
  const nc = connection;
  void (async () => {
    for await (const status of nc.status()) {
      const data = typeof status.data === "object" ? JSON.stringify(status.data) : String(status.data);
      const type: string = status.type;
      if (type === "error" || type === "disconnect") {
        options.logger.warn({ natsStatus: type, data }, "NATS connection status");
      } else if (type === "reconnecting" || type === "pingTimer") {
        // Every reconnectTimeWait while the server is away: the disconnect line said it.
        options.logger.debug({ natsStatus: type, data }, "NATS connection status");
      } else {
        options.logger.info({ natsStatus: type, data }, "NATS connection status");
      }
      if (type === "reconnect") void redeclare();
    }
  })();
  let redeclaring = false;
  async function redeclare(): Promise<void> {
    if (!options.declare || redeclaring) return;
    redeclaring = true;
    try {
      for (let failures = 1; !nc.isClosed(); failures++) {
        try {
          await options.declare(await nc.jetstreamManager());
          return;
        } catch (error) {
          const pauseMs = failureBackoffMs(failures);
          options.logger.warn(
            { err: error, failures, pauseMs },
            "declaring the streams after a reconnect failed; retrying",
          );
          await new Promise((resolve) => setTimeout(resolve, pauseMs).unref());
        }
      }
    } finally {
      redeclaring = false;
    }
  }
  void nc.closed().then((error) => {
    if (error) options.logger.error({ err: error }, "NATS connection closed with an error");
  });
  if (options.declare) await options.declare(await nc.jetstreamManager());
  return nc;
}

function isNotFound(error: unknown): boolean {
  const { code, message } = error as { code?: unknown; message?: unknown };
  return code === "404" || (typeof message === "string" && /not found/i.test(message));
}

/**
 * A JetStream API failure that passes by itself: no leader to answer yet (a stream or consumer just
 * created or scaled to several replicas, or electing after a server died), or no answer in time.
 */
function isTransient(error: unknown): boolean {
  const { code, message } = error as { code?: unknown; message?: unknown };
  return (
    code === "503" || code === "TIMEOUT" || (typeof message === "string" && /temporarily unavailable/i.test(message))
  );
}

/** `declare` again while it fails transiently, for up to `withinMs`; any other failure at once. */
async function retryTransient(declare: () => Promise<void>, withinMs = 30_000): Promise<void> {
  const deadline = Date.now() + withinMs;
  for (let failures = 1; ; failures++) {
    try {
      return await declare();
    } catch (error) {
      if (!isTransient(error) || Date.now() >= deadline) throw error;
      await new Promise((resolve) => setTimeout(resolve, Math.min(2_000, 100 * 2 ** failures)).unref());
    }
  }
}

/**
 * A refusal of a replica count above 1 (a single server, or a cluster with fewer servers than the
 * count) as an error naming the setting; any other error as it is.
 */
function explainReplicas(error: unknown, replicas: number | undefined, what: string): unknown {
  const message = error instanceof Error ? error.message : String(error);
  if (replicas === undefined || replicas <= 1) return error;
  if (!/non-clustered|insufficient resources|no suitable peers|replicas/i.test(message)) return error;
  return new Error(
    `${what}: NATS_STREAM_REPLICAS=${replicas} refused by NATS (${message}); ` +
      `a count above 1 needs a JetStream cluster of at least that many servers`,
    { cause: error },
  );
}

/**
 * Creates the stream, or brings an existing one to `config` (fields JetStream lets change,
 * `num_replicas` included: a clustered JetStream scales the stream up or down in place). Retried
 * for up to 30 s while JetStream has no leader to answer (a cluster electing one).
 */
export async function ensureStream(
  jsm: JetStreamManager,
  config: Partial<StreamConfig> & { name: string },
): Promise<void> {
  try {
    await retryTransient(async () => {
      try {
        const existing = await jsm.streams.info(config.name);
        // A single nats-server (2.9) takes a replica count above 1 in an update without a word and
        // reports it, keeping one copy; JetStream describes a clustered stream's peers, so refuse
        // here, as it refuses to add such a stream.
        if ((config.num_replicas ?? 1) > 1 && existing.cluster === undefined) {
          throw new Error("replicas > 1 not supported in non-clustered mode (the stream is on a single server)");
        }
      } catch (error) {
        if (!isNotFound(error)) throw error;
        try {
          await jsm.streams.add(config);
          return;
        } catch (addError) {
          // Another replica created it meanwhile: fall through to the update.
          if (!/already in use/i.test((addError as Error).message)) throw addError;
        }
      }
      await jsm.streams.update(config.name, config);
    });
  } catch (error) {
    throw explainReplicas(error, config.num_replicas, `stream ${config.name}`);
  }
}

/**
 * Creates the durable pull consumer, or updates an existing one to `config` (`num_replicas`
 * included: its state is kept by that many of the stream's servers). Retried for up to 30 s while
 * JetStream has no leader to answer (the stream was just created or scaled, or a server died).
 */
export async function ensureDurableConsumer(
  jsm: JetStreamManager,
  stream: string,
  config: Partial<ConsumerConfig> & { durable_name: string },
): Promise<void> {
  try {
    await retryTransient(async () => {
      try {
        await jsm.consumers.info(stream, config.durable_name);
      } catch (error) {
        if (!isNotFound(error)) throw error;
        await jsm.consumers.add(stream, config);
        return;
      }
      await jsm.consumers.update(stream, config.durable_name, config);
    });
  } catch (error) {
    throw explainReplicas(error, config.num_replicas, `consumer ${stream} > ${config.durable_name}`);
  }
}

export interface PullLoop {
  /**
   * Stops pulling and resolves once the loop has ended: the messages already handed to
   * `onMessages` are its to finish; every message fetched but not handed over yet (buffered, or
   * still on its way from the server) is given back at once with `nak`, so another process gets
   * it now instead of after the consumer's ack wait.
   */
  stop(): Promise<void>;
  /**
   * For a loop given `freeSlots`: a slot came free, so a loop waiting for one asks again. Without
   * `freeSlots` it does nothing.
   */
  slotFreed(): void;
}

export interface PullLoopOptions {
  js: JetStreamClient;
  stream: string;
  consumer: string;
  /** Messages asked for per fetch, at most. */
  batchSize: number;
  expiresMs: number;
  logger: Logger;
  /** Names what is fetched, for the log line of a failure ("events for the projections"). */
  what: string;
  onMessages(messages: AsyncIterable<JsMsg>): Promise<void>;
  /**
   * Bounded concurrency across fetches, for a handler that keeps messages after `onMessages`
   * returns (the delivery worker): how many more messages it can take now. Asked before each
   * fetch, which asks for no more than that (and no more than `batchSize`); at zero or less the
   * loop fetches nothing until `PullLoop.slotFreed()` is called. Without it, every fetch asks for
   * `batchSize`.
   */
  freeSlots?(): number;
}

/**
 * The consume loop of a durable pull consumer: fetch up to `batchSize` messages (or until
 * `expiresMs`), hand the fetch's messages to `onMessages`, fetch again; a failed fetch (NATS away,
 * the consumer missing after a server lost its store) is logged as `what` and retried forever with
 * a growing pause. `onMessages` acks or naks each message itself.
 */
export function startPullLoop(options: PullLoopOptions): PullLoop {
  let running = true;
  let current: FetchHandOver | undefined;
  let stopWait: (() => void) | undefined;
  let wakeForSlot: (() => void) | undefined;
  const loop = (async () => {
    let failures = 0;
    let consumer: Consumer | undefined;
    while (running) {
      let max = options.batchSize;
      if (options.freeSlots) {
        const free = options.freeSlots();
        if (free <= 0) {
          await new Promise<void>((resolve) => (wakeForSlot = resolve));
          wakeForSlot = undefined;
          continue;
        }
        max = Math.min(max, free);
      }
      try {
        consumer ??= await options.js.consumers.get(options.stream, options.consumer);
        current = handOver(await consumer.fetch({ max_messages: max, expires: options.expiresMs }));
        if (!running) current.giveBack();
        await options.onMessages(current.messages);
        await current.done;
        failures = 0;
      } catch (error) {
        // A failed fetch, or a handler that threw: what the fetch still holds goes back now.
        current?.giveBack();
        failures += 1;
        consumer = undefined;
        if (!running) break;
        options.logger.warn({ err: error, failures }, `fetching ${options.what} failed; retrying`);
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, failureBackoffMs(failures));
          stopWait = () => {
            clearTimeout(timer);
            resolve();
          };
        });
      } finally {
        current = undefined;
      }
    }
  })();
  return {
    async stop() {
      running = false;
      const given = current?.giveBack() ?? 0;
      stopWait?.();
      wakeForSlot?.();
      await loop;
      if (given > 0) options.logger.info({ given }, `stopping: gave back ${options.what} fetched but not handled`);
    },
    slotFreed() {
      wakeForSlot?.();
    },
  };
}

/** One fetch's messages as the loop hands them over, and the means to give back the rest. */
interface FetchHandOver {
  /** The messages in the order they came, one at a time as the handler asks for them. */
  messages: AsyncIterable<JsMsg>;
  /**
   * Ends the fetch: no more pulling; each message not handed over yet is nak'ed now, and so is
   * each one still arriving (the fetch's subscription is drained, so a message the server sent
   * before it saw the unsubscribe is not dropped to wait out the ack wait). Returns how many it
   * gave back at once.
   */
  giveBack(): number;
  /** Settles when the fetch has ended (rejects when it failed). */
  done: Promise<void>;
}

function handOver(fetched: ConsumerMessages): FetchHandOver {
  const queue: JsMsg[] = [];
  let givingBack = false;
  let ended = false;
  let wake: (() => void) | undefined;
  const done = (async () => {
    try {
      for await (const msg of fetched) {
        if (givingBack) msg.nak();
        else queue.push(msg);
        wake?.();
      }
    } finally {
      ended = true;
      wake?.();
    }
  })();
  done.catch(() => undefined); // awaited by the loop; never an unhandled rejection
  async function* messages(): AsyncIterable<JsMsg> {
    for (;;) {
      const msg = queue.shift();
      if (msg !== undefined) {
        yield msg;
        continue;
      }
      if (ended) break;
      await new Promise<void>((resolve) => (wake = resolve));
      wake = undefined;
    }
    await done;
  }
  return {
    messages: messages(),
    done,
    giveBack() {
      if (givingBack) return 0;
      givingBack = true;
      const left = queue.splice(0);
      for (const msg of left) msg.nak();
      // The fetch's own subscription (nats.js keeps it as `sub`): draining it unsubscribes, then
      // delivers what the server had sent until then, then ends the fetch's iterator.
      const sub = (fetched as unknown as { sub?: Subscription }).sub;
      if (sub !== undefined && !sub.isClosed()) {
        sub.drain().catch(() => fetched.stop());
      } else {
        fetched.stop();
      }
      wake?.();
      return left.length;
    },
  };
}

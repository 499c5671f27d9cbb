/**
 * The transactional outbox: a service that announces a change writes the event into its own
 * `outbox` table in the same transaction as the change, and a relay publishes what is there to
 * JetStream (Nats-Msg-Id = event id) and deletes it once the stream has stored it. No dual writes.
 *
 * A crash after a publish and before the delete publishes the event again: the stream's duplicate
 * window drops the copy, and consumers are idempotent on the event id for anything later.
 *
 * A stream's store is not the last word: a nats-server that comes back with an empty store
 * (a lost volume) has lost every event the relay published and no consumer took yet. A service
 * whose consumer of the events writes to the same database can close that gap: with
 * `republishAfterMs` the relay marks a row published (`published_at`, see addOutboxPublishedAt)
 * instead of deleting it, the consumer deletes it (consumeFromOutbox) in the transaction that
 * records the event, and a row still there `republishAfterMs` after its publish is published
 * again.
 */
import type { Knex } from "knex";
import { headers as natsHeaders, type JetStreamClient, type NatsConnection } from "nats";
import type { Logger } from "pino";
import { Counter, Gauge, type Registry } from "prom-client";
import { failureBackoffMs } from "./backoff.js";
import { inTransaction, preparedStatement } from "./postgres.js";
import { TRACEPARENT, withTraceId } from "./tracing.js";

export const outboxTable = "outbox";

/** For a migration: the outbox table in the service's schema. */
export async function createOutboxTable(db: Knex): Promise<void> {
  await db.schema.createTable(outboxTable, (table) => {
    table.bigIncrements("seq").primary();
    table.text("event_id").notNullable().unique();
    table.text("subject").notNullable();
    table.binary("payload").notNullable();
    table.timestamp("created_at", { useTz: true }).notNullable().defaultTo(db.fn.now());
  });
}

/** For a migration: the column a relay with `republishAfterMs` marks published rows with. */
export async function addOutboxPublishedAt(db: Knex): Promise<void> {
  await db.schema.alterTable(outboxTable, (table) => {
    table.timestamp("published_at", { useTz: true }).nullable();
  });
}

/**
 * For a migration: the W3C trace context of the change that wrote a row (nullable: untraced rows
 * and rows of older releases have none). The relay sends it as the message's `traceparent` header.
 */
export async function addOutboxTraceparent(db: Knex): Promise<void> {
  await db.schema.alterTable(outboxTable, (table) => {
    table.text("traceparent").nullable();
  });
}

export async function dropOutboxTraceparent(db: Knex): Promise<void> {
  await db.schema.alterTable(outboxTable, (table) => {
    table.dropColumn("traceparent");
  });
}

export async function dropOutboxPublishedAt(db: Knex): Promise<void> {
  await db.schema.alterTable(outboxTable, (table) => {
    table.dropColumn("published_at");
  });
}

/**
 * The consumer's side of a kept outbox: called in the transaction that records the event, so the
 * row goes exactly when the event is safe. Deleting a row that is not there is fine.
 */
export async function consumeFromOutbox(trx: Knex | Knex.Transaction, eventId: string): Promise<void> {
  await trx(outboxTable).where({ event_id: eventId }).delete();
}

export async function dropOutboxTable(db: Knex): Promise<void> {
  await db.schema.dropTable(outboxTable);
}

export interface OutboxEntry {
  /** Becomes the Nats-Msg-Id: the stream drops a second message with the same id. */
  eventId: string;
  subject: string;
  payload: Uint8Array;
  /** The trace context of the change (needs addOutboxTraceparent); published as the `traceparent` header. */
  traceparent?: string | undefined;
}

/**
 * Appends an event inside the caller's transaction. Returns false when an entry with this event
 * id is already waiting (nothing is written then).
 */
export async function appendToOutbox(trx: Knex | Knex.Transaction, entry: OutboxEntry): Promise<boolean> {
  const inserted = await trx(outboxTable)
    .insert({
      event_id: entry.eventId,
      subject: entry.subject,
      payload: Buffer.from(entry.payload),
      ...(entry.traceparent ? { traceparent: entry.traceparent } : {}),
    })
    .onConflict("event_id")
    .ignore()
    .returning("seq");
  return inserted.length > 0;
}

/**
 * Publishes one outbox entry to JetStream (Nats-Msg-Id = its event id, its trace context as the
 * `traceparent` header) and resolves once the stream stored it.
 */
export async function publishOutboxEntry(js: JetStreamClient, entry: OutboxEntry, timeoutMs: number): Promise<void> {
  let headers;
  if (entry.traceparent) {
    headers = natsHeaders();
    headers.set(TRACEPARENT, entry.traceparent);
  }
  await js.publish(entry.subject, entry.payload, {
    msgID: entry.eventId,
    timeout: timeoutMs,
    ...(headers ? { headers } : {}),
  });
}

/** At debug level, one line per published event, with the trace id of the change that wrote it. */
function logEventPublished(logger: Logger, entry: Pick<OutboxEntry, "eventId" | "subject" | "traceparent">): void {
  if (!logger.isLevelEnabled("debug")) return;
  withTraceId(logger, entry.traceparent).debug({ eventId: entry.eventId, subject: entry.subject }, "event published");
}

/** publishAfterCommit's publisher. */
export interface AtOncePublisher {
  /** Publishes an entry committed already marked published (within the gather window). */
  publish(entry: OutboxEntry): void;
  /** Publishes what the window holds now (call before draining the connection). */
  flush(): void;
}

/**
 * A kept outbox's fast path (a relay with `republishAfterMs`): the writer inserts the row already
 * marked published (`published_at = now()`) and, after its commit, hands the entry to the publisher
 * this returns, which publishes it as a plain NATS message the stream captures (with its
 * Nats-Msg-Id and traceparent headers): no relay pass, no statement, and no PubAck to wait for,
 * because the stream's acknowledgement is not what confirms a kept row: the consumer deleting it
 * is (consumeFromOutbox). The entries handed over within `gatherMs` of the first go out together,
 * in one socket write (a write costs more CPU than building the messages), at the cost of up to
 * that much delay before an event reaches the stream; 0: each at once.
 *
 * The relay covers every way the fast path can fail: a publish refused at once (the connection
 * closed or draining) clears the row's mark and kicks the relay, whose next pass publishes it with
 * a PubAck; a message lost on the way, a store that refused it, or a writer that died between its
 * commit and the publish leaves a marked row that the relay publishes again `republishAfterMs`
 * after the mark (the stream's duplicate window drops a second copy).
 */
export function publishAfterCommit(options: {
  db: Knex;
  nc: Pick<NatsConnection, "publish">;
  relay: Pick<OutboxRelay, "kick">;
  logger: Logger;
  gatherMs?: number;
}): AtOncePublisher {
  const gatherMs = options.gatherMs ?? 0;
  let gathered: OutboxEntry[] = [];
  let timer: NodeJS.Timeout | undefined;

  function send(entry: OutboxEntry): void {
    try {
      const headers = natsHeaders();
      headers.set("Nats-Msg-Id", entry.eventId);
      if (entry.traceparent) headers.set(TRACEPARENT, entry.traceparent);
      options.nc.publish(entry.subject, entry.payload, { headers });
      logEventPublished(options.logger, entry);
    } catch (error) {
      options.logger.warn(
        { err: error, eventId: entry.eventId },
        "publishing an event at once failed; the outbox relay publishes it",
      );
      options
        .db(outboxTable)
        .update({ published_at: null })
        .where({ event_id: entry.eventId })
        .then(
          () => options.relay.kick(),
          (cleared: unknown) =>
            options.logger.warn(
              { err: cleared, eventId: entry.eventId },
              "the event's outbox row stays marked; the relay publishes it again after its republish delay",
            ),
        );
    }
  }

  function flush(): void {
    clearTimeout(timer);
    timer = undefined;
    const entries = gathered;
    gathered = [];
    for (const entry of entries) send(entry);
  }

  return {
    publish(entry) {
      if (gatherMs <= 0) {
        send(entry);
        return;
      }
      gathered.push(entry);
      timer ??= setTimeout(flush, gatherMs);
    },
    flush,
  };
}

export interface OutboxRelay {
  /** Publishes what is waiting now rather than at the next poll (call after a commit). */
  kick(): void;
  /** Stops after the pass in progress. */
  stop(): Promise<void>;
}

export interface OutboxRelayOptions {
  db: Knex;
  js: JetStreamClient;
  logger: Logger;
  /** How often the outbox is looked at when nothing kicked the relay. */
  pollIntervalMs: number;
  /** Rows per transaction. */
  batchSize?: number;
  /** Metrics `<prefix>_outbox_lag_seconds` and `<prefix>_outbox_published_total`. */
  registry?: Registry;
  metricPrefix?: string;
  /** How long one publish may wait for the stream's acknowledgement. */
  publishTimeoutMs?: number;
  /**
   * Keep published rows (marked `published_at`) until the consumer removes them with
   * consumeFromOutbox, and publish a row again when it is still there this long after its
   * publish. Absent: a row is deleted once the stream stored it.
   */
  republishAfterMs?: number;
  /**
   * While kicks keep coming, start a pass at most this often (default 0: at once after each
   * kick). Every commit of a send kicks the relay; with a window, the events committed in it go in
   * one pass (one transaction) instead of one pass each, at the cost of up to this much delay
   * before an event reaches the stream. A kick after a quiet spell longer than the window still
   * starts a pass at once.
   */
  gatherMs?: number;
}

interface OutboxRow {
  seq: string;
  event_id: string;
  subject: string;
  payload: Buffer;
  traceparent: string | null;
}

/**
 * Starts the relay loop: in one transaction, take the oldest rows (one statement: locked `for
 * update skip locked`, so several replicas share the work, and deleted or marked published),
 * publish them all and await every PubAck, commit (a failed publish rolls the taking back).
 * Errors (NATS or Postgres unreachable) are logged and retried forever with a growing pause.
 * The outbox has its traceparent column (addOutboxTraceparent), sent as the message's header.
 */
export function startOutboxRelay(options: OutboxRelayOptions): OutboxRelay {
  const batchSize = options.batchSize ?? 100;
  const publishTimeoutMs = options.publishTimeoutMs ?? 5_000;
  const prefix = options.metricPrefix ?? "service";
  let published: Counter | undefined;
  if (options.registry) {
    published = new Counter({
      name: `${prefix}_outbox_published_total`,
      help: "Events the outbox relay published to JetStream.",
      registers: [options.registry],
    });
    new Gauge({
      name: `${prefix}_outbox_lag_seconds`,
      help: "Age of the oldest event waiting in the outbox (0 when empty); kept rows wait until consumed.",
      registers: [options.registry],
      async collect() {
        try {
          const result = await options.db.raw<{ rows: { lag: number | string | null }[] }>(
            `select extract(epoch from now() - min(created_at)) as lag from ${outboxTable}`,
          );
          this.set(Number(result.rows[0]?.lag ?? 0));
        } catch {
          // The database is away: keep the last value; the relay logs the outage.
        }
      },
    });
  }

  let running = true;
  let kicked = false;
  let waiting: { end: () => void; untilKicked: boolean } | undefined;
  /** Waits `ms`; stop ends the wait early, and so does a kick when `untilKicked`. */
  const pause = (ms: number, untilKicked: boolean) =>
    new Promise<void>((resolve) => {
      if (ms <= 0 || !running || (untilKicked && kicked)) {
        resolve();
        return;
      }
      const timer = setTimeout(end, ms);
      function end() {
        clearTimeout(timer);
        waiting = undefined;
        resolve();
      }
      waiting = { end, untilKicked };
    });

  const keep = options.republishAfterMs !== undefined;
  // One statement takes the due rows and marks (kept) or deletes them, in the pass's transaction:
  // a failed publish rolls it back, so nothing is marked or lost. Kept rows: those never
  // published, and those published long ago that no consumer removed. Prepared (parsed once per
  // connection): the relay runs after every kicked commit.
  const due = (filter: string) =>
    `select seq from ${outboxTable} ${filter} order by seq limit ? for update skip locked`;
  const returning = "returning seq, event_id, subject, payload, traceparent";
  const takeSql = keep
    ? preparedStatement(
        "outbox_relay_take_kept",
        `update ${outboxTable} set published_at = now() where seq in (${due(
          "where published_at is null or published_at < now() - make_interval(secs => ?::double precision / 1000)",
        )}) ${returning}`,
      )
    : preparedStatement("outbox_relay_take", `delete from ${outboxTable} where seq in (${due("")}) ${returning}`);
  const takeBindings = keep ? [options.republishAfterMs!] : [];

  async function pass(): Promise<OutboxRow[]> {
    return inTransaction(options.db, async (run) => {
      const rows = await run<OutboxRow>(takeSql, [...takeBindings, batchSize]);
      if (rows.length === 0) return rows;
      // Published in the outbox's order (the statement returns its rows in no set order).
      rows.sort((a, b) => Number(a.seq) - Number(b.seq));
      await Promise.all(
        rows.map((row) =>
          publishOutboxEntry(
            options.js,
            {
              eventId: row.event_id,
              subject: row.subject,
              payload: row.payload,
              traceparent: row.traceparent ?? undefined,
            },
            publishTimeoutMs,
          ),
        ),
      );
      return rows;
    });
  }

  function logPublished(rows: OutboxRow[]): void {
    for (const row of rows) {
      logEventPublished(options.logger, {
        eventId: row.event_id,
        subject: row.subject,
        traceparent: row.traceparent ?? undefined,
      });
    }
  }

  const gatherMs = options.gatherMs ?? 0;

  const loop = (async () => {
    let failures = 0;
    let passStarted = -Infinity;
    while (running) {
      // Kicked again within the gather window: wait for what is left of it (stop ends it early).
      if (kicked && gatherMs > 0) await pause(gatherMs - (performance.now() - passStarted), false);
      passStarted = performance.now();
      kicked = false;
      try {
        const rows = await pass();
        const count = rows.length;
        if (count > 0) published?.inc(count);
        logPublished(rows);
        if (failures > 0) options.logger.info({ failures }, "outbox relay recovered");
        failures = 0;
        if (count === batchSize) continue; // more may be waiting
        await pause(options.pollIntervalMs, true);
      } catch (error) {
        failures += 1;
        const pauseMs = failureBackoffMs(failures);
        options.logger.warn({ err: error, failures, pauseMs }, "outbox relay failed; retrying");
        kicked = false;
        await pause(pauseMs, true);
      }
    }
  })();

  return {
    kick() {
      kicked = true;
      if (waiting?.untilKicked) waiting.end();
    },
    async stop() {
      running = false;
      waiting?.end();
      await loop;
    },
  };
}

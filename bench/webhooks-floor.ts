/**
 * bench:webhooks's floor: the webhook chain written plainly with grpc-js, pg and nats in one Node
 * process, none of our code (the generated @platform/proto definitions only, so the bench calls
 * it with the same EventServiceClient and request as the product). Run by bench/webhooks.ts;
 * tables in bench/webhooks-floor-schema.ts. The same durable work per delivery as the product,
 * each step committed before the next one is allowed to start, batched where a careful engineer
 * would batch:
 *
 *   1. PublishEvent (gRPC): one statement (a data-modifying CTE: one transaction) inserts the event
 *      row and its outbox row; the answer goes out after the commit. The committed outbox row is
 *      handed to the relay in memory (rows older than 5 s are swept from the table, as after a crash).
 *   2. Relay: outbox rows waiting together are published together to the stream
 *      `${FLOOR_NAMESPACE}FLOOR_EVENTS` (Nats-Msg-Id = event id), every PubAck awaited, then the
 *      published rows are deleted in one statement (deletes of rows published meanwhile group).
 *   3. Fan-out: a durable pull consumer (`floor-fanout`, pulled continuously, up to 256 a pull); the
 *      events that arrived while the previous batch was being written go together: one INSERT of one
 *      delivery row per matching endpoint (endpoints and their secrets loaded once at start;
 *      match on event type), each row with its exact request body, in one transaction; after
 *      the commit one job message per delivery on `${FLOOR_NAMESPACE}FLOOR_JOBS` (subject per
 *      endpoint, Nats-Msg-Id = `<delivery id>:1`, the body in the job), every PubAck awaited;
 *      then the events are acked.
 *   4. Worker: a second durable pull consumer (`floor-delivery`), fetching only as many jobs as
 *      it has free slots (5 s pull expiry, as the product): at most FLOOR_CONCURRENCY (64) attempts in flight and jobs held, and
 *      FLOOR_ENDPOINT_CONCURRENCY (8) per endpoint (the rest wait in the endpoint's line in
 *      memory). Each attempt signs the body (Service-Signature `t=<unix s>,v1=<hex HMAC-SHA256 of
 *      "<t>.<body>">`, the product's headers) and POSTs it over a keep-alive agent per endpoint
 *      (8 sockets, 10 s deadline, first 4 KiB of the answer kept).
 *   5. The attempts that finished together are recorded together: one statement (a CTE: the
 *      deliveries' state UPDATE returning the attempt numbers, the attempt rows INSERT) in one
 *      transaction; after the commit each job is acked (a failure: nak, retried in 30 s).
 *
 * Env: DATABASE_URL, NATS_URL, FLOOR_NAMESPACE, SECRETS_KEY (base64, opens the endpoints' sealed
 * secrets), FLOOR_CONCURRENCY, FLOOR_ENDPOINT_CONCURRENCY, NODE_EXTRA_CA_CERTS for the receivers.
 * Prints `{"msg":"listening","service":"webhooks-floor","grpcPort":…}` when ready.
 */
import { createHmac, randomBytes } from "node:crypto";
import { Agent, request } from "node:https";
import {
  Server,
  ServerCredentials,
  status,
  type sendUnaryData,
  type ServerErrorResponse,
  type ServerUnaryCall,
} from "@grpc/grpc-js";
import { EventServiceService, type PublishEventRequest, type PublishEventResponse } from "@platform/proto/webhooks/v1";
import {
  AckPolicy,
  connect,
  DeliverPolicy,
  RetentionPolicy,
  StorageType,
  type ConsumerConfig,
  type JetStreamClient,
  type JetStreamManager,
  type JsMsg,
  type StreamConfig,
} from "nats";
import pg from "pg";
import { floorSchema as S, openSecret } from "./webhooks-floor-schema.js";

const namespace = process.env.FLOOR_NAMESPACE ?? "";
const concurrency = Number(process.env.FLOOR_CONCURRENCY ?? 64);
const endpointConcurrency = Math.min(
  Number(process.env.FLOOR_ENDPOINT_CONCURRENCY ?? 8),
  Math.max(1, Math.floor(concurrency / 2)),
);
const secretsKey = Buffer.from(process.env.SECRETS_KEY ?? "", "base64");
const streams = { events: `${namespace}FLOOR_EVENTS`, jobs: `${namespace}FLOOR_JOBS` };
const subjects = { events: `${namespace}floor.events`, jobs: `${namespace}floor.jobs` };
const consumers = { fanout: "floor-fanout", delivery: "floor-delivery" };
const userAgent = "webhooks-floor/1.0";
const attemptTimeoutMs = 10_000;
const retryDelayMs = 30_000;
const keptResponseBytes = 4096;
const nanos = (ms: number) => ms * 1_000_000;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const log = (msg: string, fields: Record<string, unknown> = {}) =>
  process.stderr.write(`${JSON.stringify({ service: "webhooks-floor", msg, ...fields })}\n`);

/**
 * Group commit: the items added while `maxWriters` writes are running go together into the next
 * write (at most `maxBatch`); each add resolves once its write has succeeded.
 */
function batcher<T>(write: (items: T[]) => Promise<void>, maxBatch: number, maxWriters: number) {
  const queue: { item: T; resolve: () => void; reject: (error: unknown) => void }[] = [];
  let writing = 0;
  let scheduled = false;
  const schedule = () => {
    if (scheduled || writing >= maxWriters || queue.length === 0) return;
    scheduled = true;
    setImmediate(flush);
  };
  function flush() {
    scheduled = false;
    if (writing >= maxWriters || queue.length === 0) return;
    const batch = queue.splice(0, maxBatch);
    writing += 1;
    write(batch.map((entry) => entry.item))
      .then(
        () => batch.forEach((entry) => entry.resolve()),
        (error: unknown) => batch.forEach((entry) => entry.reject(error)),
      )
      .finally(() => {
        writing -= 1;
        schedule();
      });
    schedule();
  }
  const add = (item: T) =>
    new Promise<void>((resolve, reject) => {
      queue.push({ item, resolve, reject });
      schedule();
    });
  return { add, idle: () => writing === 0 && queue.length === 0 };
}

interface Endpoint {
  id: string;
  tenant: string;
  url: URL;
  eventTypes: string[];
  apiVersion: string;
  secret: string;
  agent: Agent;
}

const matches = (type: string, patterns: string[]) =>
  patterns.some((p) => p === type || p === "*" || (p.endsWith(".*") && type.startsWith(p.slice(0, -1))));

/** Plain JSON with every object's keys sorted (the envelope's data.object is deterministic). */
function sortedKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortedKeys);
  if (value !== null && typeof value === "object") {
    const object = value as Record<string, unknown>;
    return Object.fromEntries(
      Object.keys(object)
        .sort()
        .map((key) => [key, sortedKeys(object[key])]),
    );
  }
  return value;
}

/** An event as the relay publishes it (JSON). */
interface BusEvent {
  id: string;
  type: string;
  tenant: string;
  occurred_at: string;
  data: Record<string, unknown>;
}

interface Job {
  deliveryId: string;
  eventId: string;
  payload: string;
}

interface Attempt {
  deliveryId: string;
  attemptedAt: Date;
  durationMs: number;
  succeeded: boolean;
  statusCode: number | null;
  error: string | null;
  responseBody: Buffer;
  truncated: boolean;
}

async function ensureStream(jsm: JetStreamManager, config: Partial<StreamConfig> & { name: string }) {
  await jsm.streams.info(config.name).catch(() => jsm.streams.add(config));
}

async function ensureConsumer(jsm: JetStreamManager, stream: string, config: Partial<ConsumerConfig>) {
  await jsm.consumers.info(stream, config.durable_name!).catch(() => jsm.consumers.add(stream, config));
}

const TENANT = /^[A-Za-z0-9_-]{1,64}$/;
const TYPE = /^[a-z][a-z0-9_]*\.[a-z][a-z0-9_]*$/;
const EVENT_ID = /^[A-Za-z0-9_.:-]{1,128}$/;

async function main() {
  const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL, max: 10 });
  const nc = await connect({ servers: process.env.NATS_URL ?? "nats://127.0.0.1:4222" });
  const jsm = await nc.jetstreamManager();
  const js: JetStreamClient = nc.jetstream();
  await ensureStream(jsm, {
    name: streams.events,
    subjects: [`${subjects.events}.>`],
    storage: StorageType.File,
    retention: RetentionPolicy.Limits,
    max_age: nanos(30 * 86_400_000),
    duplicate_window: nanos(120_000),
  });
  await ensureStream(jsm, {
    name: streams.jobs,
    subjects: [`${subjects.jobs}.>`],
    storage: StorageType.File,
    retention: RetentionPolicy.Workqueue,
    duplicate_window: nanos(120_000),
  });
  await ensureConsumer(jsm, streams.events, {
    durable_name: consumers.fanout,
    ack_policy: AckPolicy.Explicit,
    deliver_policy: DeliverPolicy.All,
    ack_wait: nanos(30_000),
    max_deliver: -1,
    max_ack_pending: 10_000,
  });
  await ensureConsumer(jsm, streams.jobs, {
    durable_name: consumers.delivery,
    ack_policy: AckPolicy.Explicit,
    deliver_policy: DeliverPolicy.All,
    ack_wait: nanos(60_000),
    max_deliver: -1,
    max_ack_pending: 1_000_000,
  });

  // Endpoints and their secrets, once.
  const endpoints = new Map<string, Endpoint>();
  const loaded = await pool.query<{
    id: string;
    tenant_id: string;
    url: string;
    event_types: string[];
    api_version: string;
    secret_sealed: string;
  }>(
    `select id, tenant_id, url, event_types, api_version, secret_sealed
       from ${S}.endpoints where deleted_at is null and not paused`,
  );
  for (const row of loaded.rows) {
    endpoints.set(row.id, {
      id: row.id,
      tenant: row.tenant_id,
      url: new URL(row.url),
      eventTypes: row.event_types,
      apiVersion: row.api_version,
      secret: openSecret(secretsKey, row.secret_sealed),
      agent: new Agent({
        keepAlive: true,
        maxSockets: endpointConcurrency,
        maxFreeSockets: endpointConcurrency,
        scheduling: "lifo",
      }),
    });
  }
  let running = true;

  // 2. The relay, and the deletion of what it published.
  const forget = batcher<string>(
    async (seqs) => {
      await pool.query(`delete from ${S}.outbox where seq = any($1::bigint[])`, [seqs]);
    },
    1024,
    1,
  );
  const relay = batcher<{ seq: string; eventId: string; subject: string; payload: Buffer }>(
    async (rows) => {
      await Promise.all(rows.map((row) => js.publish(row.subject, row.payload, { msgID: row.eventId })));
      for (const row of rows) forget.add(row.seq).catch((error: unknown) => log("outbox delete failed", { error }));
    },
    512,
    2,
  );
  const sweep = setInterval(() => {
    pool
      .query<{ seq: string; event_id: string; subject: string; payload: Buffer }>(
        `select seq, event_id, subject, payload from ${S}.outbox
          where created_at < now() - interval '5 seconds' order by seq limit 512`,
      )
      .then(({ rows }) =>
        Promise.all(
          rows.map((row) =>
            relay.add({ seq: row.seq, eventId: row.event_id, subject: row.subject, payload: row.payload }),
          ),
        ),
      )
      .catch((error: unknown) => log("outbox sweep failed", { error: String(error) }));
  }, 5_000);

  // 1. PublishEvent.
  const insertEvent = `with e as (
      insert into ${S}.events (id, tenant_id, type, occurred_at, data, livemode)
      values ($1, $2, $3, $4, $5, true) on conflict (id) do nothing returning id)
    insert into ${S}.outbox (event_id, subject, payload) select id, $6, $7 from e returning seq`;
  const invalid = (details: string): ServerErrorResponse =>
    Object.assign(new Error(details), { code: status.INVALID_ARGUMENT, details });
  function publishEvent(
    call: ServerUnaryCall<PublishEventRequest, PublishEventResponse>,
    callback: sendUnaryData<PublishEventResponse>,
  ) {
    const r = call.request;
    let data: unknown;
    try {
      data = JSON.parse(r.dataJson);
    } catch {
      callback(invalid("data_json: is not valid JSON"));
      return;
    }
    if (typeof data !== "object" || data === null || Array.isArray(data)) {
      callback(invalid("data_json: must be a JSON object"));
      return;
    }
    const occurredAt = r.occurredAt === "" ? new Date() : new Date(r.occurredAt);
    const id = r.eventId === "" ? `evt_${randomBytes(12).toString("hex")}` : r.eventId;
    if (!TENANT.test(r.tenantId) || !TYPE.test(r.type) || !EVENT_ID.test(id) || Number.isNaN(occurredAt.getTime())) {
      callback(invalid("tenant_id, type, event_id or occurred_at is malformed"));
      return;
    }
    const event: BusEvent = {
      id,
      type: r.type,
      tenant: r.tenantId,
      occurred_at: occurredAt.toISOString(),
      data: data as Record<string, unknown>,
    };
    const subject = `${subjects.events}.${r.type}`;
    const payload = Buffer.from(JSON.stringify(event), "utf8");
    pool.query<{ seq: string }>(insertEvent, [id, r.tenantId, r.type, occurredAt, r.dataJson, subject, payload]).then(
      ({ rows }) => {
        if (rows.length > 0) {
          relay.add({ seq: rows[0]!.seq, eventId: id, subject, payload }).catch((error: unknown) => {
            log("relay publish failed; the sweep publishes it again", { error: String(error) });
          });
        }
        callback(null, { eventId: id, duplicate: rows.length === 0 });
      },
      (error: Error) => callback(Object.assign(error, { code: status.UNAVAILABLE, details: error.message })),
    );
  }

  // 3. Fan-out: one transaction per batch of events, jobs after the commit, then the acks.
  const insertDeliveries = `insert into ${S}.deliveries
      (id, tenant_id, endpoint_id, event_id, event_type, livemode, payload, status, next_attempt_at, generation)
    select d.id, d.tenant_id, d.endpoint_id, d.event_id, d.event_type, true, d.payload, 'pending', now(), 1
      from unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[])
        as d(id, tenant_id, endpoint_id, event_id, event_type, payload)
    on conflict (event_id, endpoint_id) do update set updated_at = ${S}.deliveries.updated_at
      where ${S}.deliveries.status = 'pending'
    returning id, endpoint_id, event_id`;
  const fanout = batcher<BusEvent>(
    async (events) => {
      const columns: string[][] = [[], [], [], [], [], []];
      const payloads = new Map<string, string>();
      const seen = new Set<string>();
      for (const event of events) {
        if (seen.has(event.id)) continue;
        seen.add(event.id);
        const object = sortedKeys(event.data);
        const bodies = new Map<string, string>(); // per API version
        for (const endpoint of endpoints.values()) {
          if (endpoint.tenant !== event.tenant || !matches(event.type, endpoint.eventTypes)) continue;
          let body = bodies.get(endpoint.apiVersion);
          if (body === undefined) {
            body = JSON.stringify({
              id: event.id,
              type: event.type,
              api_version: endpoint.apiVersion,
              occurred_at: event.occurred_at,
              tenant: event.tenant,
              livemode: true,
              data: { object },
            });
            bodies.set(endpoint.apiVersion, body);
          }
          const row = [`dlv_${randomBytes(12).toString("hex")}`, event.tenant, endpoint.id, event.id, event.type, body];
          row.forEach((value, i) => columns[i]!.push(value));
          payloads.set(`${event.id} ${endpoint.id}`, body);
        }
      }
      if (columns[0]!.length === 0) return;
      const created = await pool.query<{ id: string; endpoint_id: string; event_id: string }>(
        insertDeliveries,
        columns,
      );
      await Promise.all(
        created.rows.map((row) => {
          const job: Job = {
            deliveryId: row.id,
            eventId: row.event_id,
            payload: payloads.get(`${row.event_id} ${row.endpoint_id}`)!,
          };
          return js.publish(`${subjects.jobs}.${row.endpoint_id}`, JSON.stringify(job), { msgID: `${row.id}:1` });
        }),
      );
    },
    256,
    2,
  );

  // 5. The attempts that finished together, in one statement; each job acked after the commit.
  const recordAttempts = `with v as (
      select * from unnest($1::text[], $2::timestamptz[], $3::int[], $4::bool[], $5::int[], $6::text[],
                           $7::bytea[], $8::bool[])
        as v(delivery_id, attempted_at, duration_ms, succeeded, status_code, error, response_body, truncated)
    ), d as (
      update ${S}.deliveries d set
        status = case when v.succeeded then 'succeeded' else 'awaiting_retry' end,
        attempts = d.attempts + 1,
        attempts_total = d.attempts_total + 1,
        next_attempt_at = case when v.succeeded then null else now() + interval '30 seconds' end,
        last_status_code = v.status_code,
        last_error = v.error,
        updated_at = now()
      from v where d.id = v.delivery_id
      returning d.id, d.endpoint_id, d.attempts_total)
    insert into ${S}.attempts (delivery_id, endpoint_id, number, attempted_at, duration_ms, succeeded, status_code,
                               error, response_body, response_body_truncated)
    select d.id, d.endpoint_id, d.attempts_total, v.attempted_at, v.duration_ms, v.succeeded, v.status_code, v.error,
           v.response_body, v.truncated
      from d join v on v.delivery_id = d.id`;
  const record = batcher<Attempt>(
    async (attempts) => {
      await pool.query(recordAttempts, [
        attempts.map((a) => a.deliveryId),
        attempts.map((a) => a.attemptedAt),
        attempts.map((a) => a.durationMs),
        attempts.map((a) => a.succeeded),
        attempts.map((a) => a.statusCode),
        attempts.map((a) => a.error),
        attempts.map((a) => a.responseBody),
        attempts.map((a) => a.truncated),
      ]);
    },
    256,
    2,
  );

  // 4. The worker: sign, POST.
  function post(
    endpoint: Endpoint,
    body: Buffer,
    headers: Record<string, string>,
  ): Promise<{ status: number | null; body: Buffer; truncated: boolean; error: string | null }> {
    return new Promise((resolve) => {
      let settled = false;
      const finish = (answer: { status: number | null; body: Buffer; truncated: boolean; error: string | null }) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        resolve(answer);
      };
      const failed = (error: string) => finish({ status: null, body: Buffer.alloc(0), truncated: false, error });
      const req = request({
        host: endpoint.url.hostname,
        port: endpoint.url.port === "" ? 443 : Number(endpoint.url.port),
        path: `${endpoint.url.pathname}${endpoint.url.search}`,
        method: "POST",
        agent: endpoint.agent,
        headers: { ...headers, "content-length": String(body.length) },
      });
      let timedOut = false;
      const timer = setTimeout(() => {
        timedOut = true;
        req.destroy();
      }, attemptTimeoutMs);
      req.on("error", () => failed(timedOut ? "timeout" : "connection_error"));
      req.on("response", (res) => {
        const chunks: Buffer[] = [];
        let size = 0;
        res.on("data", (chunk: Buffer) => {
          if (size < keptResponseBytes) chunks.push(chunk);
          size += chunk.length;
        });
        res.on("end", () => {
          const kept = Buffer.concat(chunks);
          finish({
            status: res.statusCode ?? 0,
            body: kept.subarray(0, keptResponseBytes),
            truncated: size > keptResponseBytes,
            error: null,
          });
        });
        res.on("error", () => failed(timedOut ? "timeout" : "connection_error"));
      });
      req.end(body);
    });
  }

  async function attempt(endpoint: Endpoint, msg: JsMsg): Promise<void> {
    const job = JSON.parse(msg.string()) as Job;
    const body = Buffer.from(job.payload, "utf8");
    const t = Math.floor(Date.now() / 1000);
    const signature = createHmac("sha256", endpoint.secret).update(`${t}.`).update(body).digest("hex");
    const attemptedAt = new Date();
    const started = performance.now();
    const answer = await post(endpoint, body, {
      "content-type": "application/json",
      "user-agent": userAgent,
      "service-signature": `t=${t},v1=${signature}`,
      "service-event-id": job.eventId,
      "service-delivery-id": job.deliveryId,
    });
    const succeeded = answer.status !== null && answer.status >= 200 && answer.status < 300;
    await record.add({
      deliveryId: job.deliveryId,
      attemptedAt,
      durationMs: Math.round(performance.now() - started),
      succeeded,
      statusCode: answer.status,
      error: succeeded ? null : (answer.error ?? `http_${answer.status}`),
      responseBody: answer.body,
      truncated: answer.truncated,
    });
    if (succeeded) msg.ack();
    else msg.nak(retryDelayMs);
  }

  let inFlight = 0;
  let queued = 0;
  const runningPer = new Map<string, number>();
  const lines = new Map<string, JsMsg[]>();
  let slotFreed: (() => void) | undefined;
  function start(endpoint: Endpoint, msg: JsMsg) {
    inFlight += 1;
    runningPer.set(endpoint.id, (runningPer.get(endpoint.id) ?? 0) + 1);
    attempt(endpoint, msg)
      .catch((error: unknown) => {
        log("attempt failed; the job comes back", { error: String(error) });
        msg.nak(5_000);
      })
      .finally(() => {
        inFlight -= 1;
        runningPer.set(endpoint.id, runningPer.get(endpoint.id)! - 1);
        const next = lines.get(endpoint.id)?.shift();
        if (next) {
          queued -= 1;
          start(endpoint, next);
        }
        slotFreed?.();
      });
  }
  function dispatch(msg: JsMsg) {
    const endpoint = endpoints.get(msg.subject.slice(subjects.jobs.length + 1));
    if (!endpoint) {
      msg.term();
      return;
    }
    if ((runningPer.get(endpoint.id) ?? 0) < endpointConcurrency) start(endpoint, msg);
    else {
      let line = lines.get(endpoint.id);
      if (!line) lines.set(endpoint.id, (line = []));
      line.push(msg);
      queued += 1;
    }
  }

  // The events: a continuous pull (one inbox for the consumer's life, so no message the server
  // sent to an expiring pull request is dropped), held events bounded by max_ack_pending.
  const stopPulls = new Set<() => void>();
  async function fanoutLoop() {
    const consumer = await js.consumers.get(streams.events, consumers.fanout);
    while (running) {
      try {
        const messages = await consumer.consume({ max_messages: 256, expires: 5_000 });
        const stopThis = () => messages.stop();
        stopPulls.add(stopThis);
        try {
          for await (const msg of messages) {
            let event: BusEvent;
            try {
              event = JSON.parse(msg.string()) as BusEvent;
            } catch {
              log("not an event; dropped", { seq: msg.seq });
              msg.term();
              continue;
            }
            fanout.add(event).then(
              () => msg.ack(),
              (error: unknown) => {
                log("fan-out failed; the event comes back", { error: String(error) });
                msg.nak(2_000);
              },
            );
          }
        } finally {
          stopPulls.delete(stopThis);
        }
      } catch (error) {
        if (!running) break;
        log("consuming events failed; retrying", { error: String(error) });
        await sleep(250);
      }
    }
  }
  // The jobs: fetch only as many as there are free slots (jobs held in the lines count), as the
  // product's worker does, with the same 5 s pull expiry.
  async function jobLoop() {
    const consumer = await js.consumers.get(streams.jobs, consumers.delivery);
    while (running) {
      const free = concurrency - inFlight - queued;
      if (free <= 0) {
        await new Promise<void>((resolve) => (slotFreed = resolve));
        slotFreed = undefined;
        continue;
      }
      try {
        const messages = await consumer.fetch({ max_messages: free, expires: 5_000 });
        const stopThis = () => messages.stop();
        stopPulls.add(stopThis);
        try {
          for await (const msg of messages) dispatch(msg);
        } finally {
          stopPulls.delete(stopThis);
        }
      } catch (error) {
        if (!running) break;
        log("fetching jobs failed; retrying", { error: String(error) });
        await sleep(250);
      }
    }
  }
  const loops = [fanoutLoop(), jobLoop()];

  const server = new Server();
  server.addService(EventServiceService, { publishEvent });
  const port = await new Promise<number>((resolve, reject) =>
    server.bindAsync("127.0.0.1:0", ServerCredentials.createInsecure(), (error, bound) =>
      error ? reject(error) : resolve(bound),
    ),
  );
  process.stdout.write(
    `${JSON.stringify({ msg: "listening", service: "webhooks-floor", grpcPort: port, endpoints: endpoints.size })}\n`,
  );

  const stop = async () => {
    if (!running) return;
    running = false;
    clearInterval(sweep);
    for (const stopPull of stopPulls) stopPull();
    slotFreed?.();
    await new Promise<void>((resolve) => server.tryShutdown(() => resolve()));
    for (let i = 0; i < 50 && (inFlight > 0 || !fanout.idle() || !record.idle() || !relay.idle()); i++) {
      await sleep(100);
    }
    await Promise.allSettled(loops);
    await nc.drain();
    await pool.end();
    for (const endpoint of endpoints.values()) endpoint.agent.destroy();
    process.exit(0);
  };
  process.on("SIGTERM", () => void stop());
  process.on("SIGINT", () => void stop());
  process.on("disconnect", () => void stop());
}

main().catch((error: unknown) => {
  log("failed", { error: String(error) });
  process.exit(1);
});

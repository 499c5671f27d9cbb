/**
 * bench:notify's floor (c), the server half: a bare grpc-js server (a pg Pool, nothing of ours)
 * doing the durable work of a send as a careful engineer would, with the same rows and indexes
 * (schema bench_floor_c: bench/notify-floor-c-schema.ts):
 *
 *   transaction 1 (one autocommitted statement, before the provider call): the Idempotency-Key
 *     claimed (insert ... on conflict do nothing) together with the tenant and opt-out check, the
 *     command row (dispatching) and the transcript entry (unknown);
 *   the provider call: an in-process sandbox answering `sent` with a message id of its own;
 *   transaction 2 (one autocommitted statement, after it): command and transcript state, the
 *     provider's message id, the key's result (what a repeat replays) and the outcome's event
 *     row in the outbox.
 *
 * A key already claimed answers its stored result (a replay) or 409. Run by bench/notify.ts only.
 *
 * With FLOOR_BATCH=1 (bench:notify's BENCH_FLOOR_BATCH): the same two statements shared by the
 * sends that arrive together, as notify shares its own since issue 33 (each a set-based statement
 * over arrays; the sends of one turn of the event loop go at once, those that arrive while two
 * statements of the kind run go together after them, up to 32): the floor of that architecture.
 *
 * Floor (d), with FLOOR_D_NATS_URL and FLOOR_D_STREAM set: the same, plus the outcome's event's
 * durable work that notify does and (c) leaves out, with nats.js alone: after transaction 2, the
 * event published as a plain NATS message with its Nats-Msg-Id (no PubAck awaited, as notify's
 * publish after commit) on a subject the file-stored stream FLOOR_D_STREAM captures; a durable
 * pull consumer gathering what arrives within 100 ms of a window's first message, recording the
 * window's events in ONE statement (the event rows, deduped by id, and an activity row each; the outbox rows deleted),
 * then acking each message.
 */
import { createHash, randomUUID } from "node:crypto";
import { Server, ServerCredentials, type ServiceDefinition } from "@grpc/grpc-js";
import { AckPolicy, connect, headers as natsHeaders, type JsMsg, type NatsConnection } from "nats";
import pg from "pg";
import { createBatcher } from "@platform/service-kit/batcher";
import { FLOOR_C_STATEMENTS } from "./notify-floor-c-schema.js";

const { claim, outcome, stored, claimBatch, outcomeBatch } = FLOOR_C_STATEMENTS;

/**
 * FLOOR_BATCH=1: calls that arrive together share one statement, gathered by the same batcher as
 * notify's (service-kit's: the calls of one turn at once; while two run, the next calls wait and go
 * together, up to 32), so the floor of shared statements gathers exactly as notify does.
 */
const gathered = <T, R>(run: (items: T[]) => Promise<R[]>) =>
  createBatcher<T, R>({ maxBatch: 32, maxInFlight: 2, run });
const columns = (rows: unknown[][]) => rows[0]!.map((_, i) => rows.map((row) => row[i]));
const batched = process.env.FLOOR_BATCH === "1";
const claimOne = async (values: unknown[]) =>
  (await pool.query<{ created_at: Date | null }>({ ...claim, values })).rows[0]!.created_at;
const claimShared = gathered(async (items: unknown[][]) =>
  (await pool.query<{ created_at: Date | null }>({ ...claimBatch, values: columns(items) })).rows.map(
    (row) => row.created_at,
  ),
);
const outcomeOne = async (values: unknown[]) => {
  await pool.query({ ...outcome, values });
};
const outcomeShared = gathered(async (items: unknown[][]) => {
  // The single statement's arguments, column by column: id, state, message id, tenant, key,
  // result, event id, subject, payload.
  await pool.query({ ...outcomeBatch, values: columns(items) });
  return items.map(() => undefined);
});

interface SendRequest {
  tenantId: string;
  key: string;
  body: {
    to: string;
    type: string;
    clientName: string;
    businessName: string;
    serviceName: string;
    when: string;
    actor: { actorReference: string; delegationReference: string | null };
  };
}
interface SendResult {
  notificationId: string;
  state: string;
  type: string;
  createdAt: string;
}

/** The in-process sandbox provider: accepts every message, sends nothing outside the process. */
const sandbox = (): Promise<{ kind: "sent"; providerMessageId: string }> =>
  Promise.resolve({ kind: "sent", providerMessageId: `sandbox.${randomUUID()}` });

// Its connections kept open through an idle spell, as notify's send pool keeps its own (pg closes
// idle ones after 10 s): the round after the idle spell compares the paths, not their reconnects.
const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL, max: 10, min: 10 });

class Refused extends Error {
  constructor(readonly status: number) {
    super(`refused (${status})`);
  }
}

async function send({ tenantId, key, body }: SendRequest): Promise<SendResult> {
  const fingerprint = createHash("sha256").update(JSON.stringify(body)).digest("base64url");
  const notificationId = `ntf_${randomUUID()}`;
  const text = `Hi ${body.clientName}, a reminder of your ${body.serviceName} at ${body.businessName} on ${body.when}.`;
  const claimValues = [
    tenantId,
    key,
    fingerprint,
    randomUUID(),
    body.to,
    notificationId,
    body.type,
    `msg_${randomUUID()}`,
    text,
    body.actor.actorReference,
    body.actor.delegationReference,
  ];
  const createdAt = await (batched ? claimShared(claimValues) : claimOne(claimValues));
  if (createdAt === null) {
    // Claimed already (or a precondition refused it): answer the stored result when it matches.
    const previous = (
      await pool.query<{ fingerprint: string; result: SendResult | null }>({
        ...stored,
        values: [tenantId, key],
      })
    ).rows[0];
    if (previous?.fingerprint === fingerprint && previous.result) return previous.result;
    throw new Refused(409);
  }
  const answer = await sandbox();
  const result: SendResult = {
    notificationId,
    state: answer.kind,
    type: body.type,
    createdAt: createdAt.toISOString(),
  };
  const eventId = `evt_${randomUUID()}`;
  const event = JSON.stringify({ id: eventId, type: "notification.sent", tenantId, object: result });
  const subject = events
    ? `${events.subjectPrefix}.${tenantId}.notification.sent`
    : `events.${tenantId}.notification.sent`;
  const outcomeValues = [
    notificationId,
    answer.kind,
    answer.providerMessageId,
    tenantId,
    key,
    JSON.stringify(result),
    eventId,
    subject,
    Buffer.from(event),
  ];
  await (batched ? outcomeShared(outcomeValues) : outcomeOne(outcomeValues));
  if (events) {
    const h = natsHeaders();
    h.set("Nats-Msg-Id", eventId);
    events.nc.publish(subject, event, { headers: h });
  }
  return result;
}

/** Floor (d)'s event path: the connection, and the subjects its stream captures. */
let events: { nc: NatsConnection; subjectPrefix: string } | undefined;

const recordEvents = {
  name: "floor_d_record",
  text: `with recorded as (
           insert into bench_floor_c.events (id, tenant_id, type, seq, payload)
           select * from unnest($1::text[], $2::text[], $3::text[], $4::bigint[], $5::jsonb[])
           on conflict (id) do nothing
           returning id, tenant_id, type, seq
         ), activity as (
           insert into bench_floor_c.activity (event_id, tenant_id, type, seq)
           select id, tenant_id, type, seq from recorded
           returning 1
         ), removed as (
           delete from bench_floor_c.outbox where event_id = any($1::text[]) returning 1
         )
         select (select count(*) from activity) as recorded`,
};

async function startEvents(url: string, stream: string): Promise<void> {
  const nc = await connect({ servers: url, name: "notify-floor-d" });
  const subjectPrefix = `${stream.toLowerCase()}.events`;
  const jsm = await nc.jetstreamManager();
  await jsm.streams.add({ name: stream, subjects: [`${subjectPrefix}.>`], duplicate_window: 120_000_000_000 });
  await jsm.consumers.add(stream, { durable_name: "floor-d", ack_policy: AckPolicy.Explicit, max_ack_pending: 10_000 });
  events = { nc, subjectPrefix };
  const consumer = await nc.jetstream().consumers.get(stream, "floor-d");
  // A window: what arrives within 100 ms of its first message, recorded in one statement.
  let batch: JsMsg[] = [];
  let timer: NodeJS.Timeout | undefined;
  const flush = () => {
    const window = batch;
    batch = [];
    timer = undefined;
    const parsed = window.map((m) => m.json<{ id: string; type: string; tenantId: string }>());
    pool
      .query({
        ...recordEvents,
        values: [
          parsed.map((e) => e.id),
          parsed.map((e) => e.tenantId),
          parsed.map((e) => e.type),
          window.map((m) => m.seq),
          window.map((m) => m.string()),
        ],
      })
      .then(
        () => window.forEach((m) => m.ack()),
        () => window.forEach((m) => m.nak()),
      );
  };
  void (async () => {
    for await (const msg of await consumer.consume({ max_messages: 1000 })) {
      batch.push(msg);
      timer ??= setTimeout(flush, 100);
    }
  })();
}

const json = {
  serialize: (value: unknown) => Buffer.from(JSON.stringify(value)),
  deserialize: (bytes: Buffer) => JSON.parse(bytes.toString("utf8")) as unknown,
};
const definition: ServiceDefinition = {
  send: {
    path: "/bench.FloorC/Send",
    requestStream: false,
    responseStream: false,
    requestSerialize: json.serialize,
    requestDeserialize: json.deserialize,
    responseSerialize: json.serialize,
    responseDeserialize: json.deserialize,
  },
};
const server = new Server({ "grpc.enable_channelz": 0 });
server.addService(definition, {
  send: (call: { request: SendRequest }, callback: (error: Error | null, value?: unknown) => void) => {
    send(call.request).then(
      (result) => callback(null, result),
      (error: Error) => (error instanceof Refused ? callback(null, { refused: error.status }) : callback(error)),
    );
  },
});
if (process.env.FLOOR_D_NATS_URL && process.env.FLOOR_D_STREAM) {
  await startEvents(process.env.FLOOR_D_NATS_URL, process.env.FLOOR_D_STREAM);
}
server.bindAsync("127.0.0.1:0", ServerCredentials.createInsecure(), (error, port) => {
  if (error) throw error;
  process.stdout.write(`${JSON.stringify({ msg: "listening", service: "notify-floor-c-grpc", grpcPort: port })}\n`);
});
process.on("SIGTERM", () =>
  server.tryShutdown(
    () => void (events?.nc.drain() ?? Promise.resolve()).then(() => pool.end()).then(() => process.exit(0)),
  ),
);

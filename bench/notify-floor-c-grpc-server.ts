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
 */
import { createHash, randomUUID } from "node:crypto";
import { Server, ServerCredentials, type ServiceDefinition } from "@grpc/grpc-js";
import pg from "pg";

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

const claim = {
  name: "floor_c_claim",
  text: `with tenant as (
           select id from bench_floor_c.tenants t where id = $1 and activated and channel_ready
             and not exists (select 1 from bench_floor_c.recipient_opt_outs o where o.tenant_id = t.id and o.recipient = $5)
         ), claimed as (
           insert into bench_floor_c.idempotency_keys (scope, key, fingerprint, state, owner, locked_until, expires_at)
           select $1, $2, $3, 'in_progress', $4, now() + interval '30 seconds', now() + interval '24 hours' from tenant
           on conflict (scope, key) do nothing
           returning 1
         ), command as (
           insert into bench_floor_c.notification_commands (id, tenant_id, idempotency_key, type, recipient, state)
           select $6, $1, $2, $7, $5, 'dispatching' from claimed
           returning created_at
         ), entry as (
           insert into bench_floor_c.conversation_messages
             (id, tenant_id, recipient, notification_id, type, text, state, actor_reference, delegation_reference)
           select $8, $1, $5, $6, $7, $9, 'unknown', $10, $11 from command
           returning 1
         )
         select (select created_at from command) as created_at, (select count(*) from entry) as entries`,
};
const outcome = {
  name: "floor_c_outcome",
  text: `with command as (
           update bench_floor_c.notification_commands set state = $2, updated_at = now() where id = $1
           returning 1
         ), entry as (
           update bench_floor_c.conversation_messages set state = $2, updated_at = now() where notification_id = $1
           returning 1
         ), provider as (
           insert into bench_floor_c.provider_messages (notification_id, provider, provider_message_id)
           values ($1, 'sandbox', $3) returning 1
         ), completed as (
           update bench_floor_c.idempotency_keys set state = 'completed', result = $6::jsonb
           where scope = $4 and key = $5 and state = 'in_progress'
           returning 1
         ), announced as (
           insert into bench_floor_c.outbox (event_id, subject, payload) values ($7, $8, $9) returning 1
         )
         select (select count(*) from command) as commands`,
};
const stored = {
  name: "floor_c_stored",
  text: "select fingerprint, result from bench_floor_c.idempotency_keys where scope = $1 and key = $2",
};

/** The in-process sandbox provider: accepts every message, sends nothing outside the process. */
const sandbox = (): Promise<{ kind: "sent"; providerMessageId: string }> =>
  Promise.resolve({ kind: "sent", providerMessageId: `sandbox.${randomUUID()}` });

const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL, max: 10 });

class Refused extends Error {
  constructor(readonly status: number) {
    super(`refused (${status})`);
  }
}

async function send({ tenantId, key, body }: SendRequest): Promise<SendResult> {
  const fingerprint = createHash("sha256").update(JSON.stringify(body)).digest("base64url");
  const notificationId = `ntf_${randomUUID()}`;
  const text = `Hi ${body.clientName}, a reminder of your ${body.serviceName} at ${body.businessName} on ${body.when}.`;
  const { rows } = await pool.query<{ created_at: Date | null }>({
    ...claim,
    values: [
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
    ],
  });
  const createdAt = rows[0]!.created_at;
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
  await pool.query({
    ...outcome,
    values: [
      notificationId,
      answer.kind,
      answer.providerMessageId,
      tenantId,
      key,
      JSON.stringify(result),
      eventId,
      `events.${tenantId}.notification.sent`,
      Buffer.from(event),
    ],
  });
  return result;
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
server.bindAsync("127.0.0.1:0", ServerCredentials.createInsecure(), (error, port) => {
  if (error) throw error;
  process.stdout.write(`${JSON.stringify({ msg: "listening", service: "notify-floor-c-grpc", grpcPort: port })}\n`);
});
process.on("SIGTERM", () => server.tryShutdown(() => void pool.end().then(() => process.exit(0))));

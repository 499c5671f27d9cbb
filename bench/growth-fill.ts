/**
 * The synthetic history of `npm run bench:growth` (bench/growth.ts), written in SQL through the
 * product's own schema: a scratch database migrated by the services' own migrations, then filled
 * with INSERT ... SELECT over generate_series in large batches (synchronous_commit off for the fill
 * session only; the tables stay as the migrations made them, logged, with every index).
 *
 * Webhooks, N deliveries:
 * - 200 tenants, a delivery's tenant drawn log-uniformly (P(tenant k) ~ 1/(k+1), Zipf-like: the
 *   biggest tenant has ~19% of the deliveries, the smallest ~0.1%); each tenant 1-20 endpoints.
 * - Deliveries go in pairs (2p, 2p+1), the two deliveries of one event to two of the tenant's
 *   endpoints; a tenant with one endpoint gets one event per delivery. Every delivery has its event.
 * - created_at uniform over the 30 days before the fill started, in insertion order (seq follows
 *   time, as in production); the event's type drawn from the catalog's emitted types. Delivery
 *   ids as the service makes them: their UTC day, then random hex (domain/ids.ts).
 * - Status: 97% succeeded, 2% awaiting_retry (next attempt 12-18 h after the fill: none overdue),
 *   0.5% dead_lettered, 0.5% held. Attempts: succeeded 1 (5% of them 2-3), awaiting_retry 1-5,
 *   dead_lettered 8, held 0; so attempts = sum(attempts_total).
 * - Realistic row widths: an envelope payload of ~420 bytes, event data ~120 bytes, response
 *   bodies of a few bytes.
 *
 * Notify, N notifications: the same tenants (activated, channel ready, commercial), 50-5 000
 * recipients each; per notification its command, transcript entry, provider message (when sent),
 * work row, activity row and projected event; idempotency keys for the last day's sends (24 h keys).
 *
 * Every value is a function of the row's index (hashint8extended), so a fill is reproducible.
 */
import { eventCatalog } from "@platform/webhooks/domain/event-catalog";
import type pg from "pg";

export const TENANTS = 200;
export const DAY_MS = 86_400_000;
export const SPAN_DAYS = 30;
/** Pairs of deliveries per INSERT batch (1 M deliveries). */
const PAIRS_PER_BATCH = 500_000;
const NOTIFICATIONS_PER_BATCH = 1_000_000;

/** A uniform number in [0, 1) from x and a seed: deterministic, cheap (an integer hash). */
const u = (x: string, seed: number) =>
  `((hashint8extended((${x})::bigint, ${seed}) & 9223372036854775807)::float8 / 9223372036854775808.0::float8)`;
/** The tenant index of a row: log-uniform over 0..TENANTS-1 (Zipf-like, s = 1). */
const tenantOf = (x: string) => `least(${TENANTS - 1}, floor(power(${TENANTS + 1}, ${u(x, 1)}))::int - 1)`;
/** A tenant's endpoint count, 1-20. */
const endpointsOf = (t: string) => `(1 + (hashint8extended((${t})::bigint, 7) & 2147483647) % 20)::int`;
const tenantId = (t: string) => `'ten_' || left(md5('t' || (${t})), 24)`;
const endpointId = (t: string, j: string) => `'ep_' || left(md5('ep' || (${t}) || '.' || (${j})), 24)`;

/** The catalog's types the platform emits (what a synthetic event is). */
export const emittedTypes = eventCatalog.filter((e) => e.emission === "emitted").map((e) => e.type);
const families = [...new Set(eventCatalog.filter((e) => e.subscribable).map((e) => e.family))].map((f) => `${f}.*`);
const sqlArray = (values: readonly string[]) => `array[${values.map((v) => `'${v}'`).join(", ")}]::text[]`;

export interface FillResult {
  seconds: number;
  /** count(*) of each table after the fill. */
  rows: Record<string, number>;
  /** What the rows must add up to, read from the other tables (the fill's own consistency). */
  expected: Record<string, number>;
}

/** The session settings of a fill connection: its commits need not wait for the WAL flush. */
export async function fillSession(client: pg.ClientBase, schema: string): Promise<void> {
  await client.query(`set search_path = ${schema}`);
  await client.query("set synchronous_commit = off");
  await client.query("set maintenance_work_mem = '256MB'");
}

/**
 * Fills the migrated webhooks schema with `deliveries` deliveries (with their events, attempts,
 * tenants' endpoints) created over the SPAN_DAYS before `now`. `progress` hears each batch.
 */
export async function fillWebhooks(
  client: pg.ClientBase,
  deliveries: number,
  now: Date,
  progress: (done: number) => void = () => undefined,
): Promise<FillResult> {
  const started = performance.now();
  // The service's own search_path: the delivery history in its day partitions (webhooks_history).
  await fillSession(client, "webhooks_history, webhooks");
  const t0 = `'${now.toISOString()}'::timestamptz`;
  // The days of the month already have their partitions, as the janitor would have made them.
  await client.query("select webhooks_history.ensure_day_partitions($1::date, $2::date)", [
    new Date(now.getTime() - (SPAN_DAYS + 1) * DAY_MS).toISOString().slice(0, 10),
    new Date(now.getTime() + 3 * DAY_MS).toISOString().slice(0, 10),
  ]);
  await client.query(
    `insert into endpoints (id, tenant_id, url, description, event_types, api_version, secret_sealed, created_at, updated_at)
     select ${endpointId("t", "j")}, ${tenantId("t")}, 'https://hooks-' || t || '.partner.test/webhooks/' || j,
            'growth bench endpoint', ${sqlArray(families)}, '2026-07-01',
            'v1.k1.growthbenchiv.growthbenchtag.growthbenchsecret',
            ${t0} - interval '${SPAN_DAYS + 1} days', ${t0} - interval '${SPAN_DAYS + 1} days'
       from generate_series(0, ${TENANTS - 1}) t cross join lateral generate_series(0, ${endpointsOf("t")} - 1) j`,
  );
  const pairs = Math.ceil(deliveries / 2);
  const types = sqlArray(emittedTypes);
  for (let p0 = 0; p0 < pairs; p0 += PAIRS_PER_BATCH) {
    const p1 = Math.min(pairs, p0 + PAIRS_PER_BATCH);
    const [{ seq: lastSeq }] = (
      await client.query<{ seq: string }>("select coalesce(max(seq), 0) as seq from deliveries")
    ).rows as [{ seq: string }];
    // The pairs of this batch: tenant, its endpoint count, time, type; then the (pair, slot) rows.
    const pairRows = `
      with pr as (
        select p, t, ${endpointsOf("t")} as m,
               ${t0} - interval '${SPAN_DAYS} days' + (p::float8 / ${pairs}) * interval '${SPAN_DAYS} days' as at,
               (${types})[1 + floor(${u("p", 3)} * ${emittedTypes.length})::int] as type
          from (select p, ${tenantOf("p")} as t from generate_series(${p0}, ${p1 - 1}) p) x
      ), rows as (
        select pr.*, s, 2 * p + s as n,
               'evt_' || left(md5(case when m >= 2 then 'e' || p else 'e' || p || '.' || s end), 24) as event_id
          from pr cross join generate_series(0, 1) s
         where 2 * p + s < ${deliveries}
      )`;
    await client.query(
      `${pairRows}
       insert into events (id, tenant_id, type, occurred_at, data, livemode, received_at)
       select event_id, ${tenantId("t")}, type, at - interval '1 second',
              ('{"booking_id":"bk_' || left(md5('b' || p), 16) || '","starts_at":"' ||
               to_char(at + interval '3 days', 'YYYY-MM-DD"T"HH24:MI:SS"Z"') ||
               '","status":"confirmed","service":"grooming","customer_ref":"cus_' || left(md5('c' || p), 12) || '"}')::jsonb,
              true, at
         from rows where s = 0 or m = 1`,
    );
    await client.query(
      `${pairRows}, d as (
         select rows.*, ${u("n", 4)} as r, ${u("n", 5)} as r2, ${u("n", 6)} as r3 from rows
       ), st as (
         select d.*,
                case when r < 0.97 then 'succeeded' when r < 0.99 then 'awaiting_retry'
                     when r < 0.995 then 'dead_lettered' else 'held' end as status
           from d
       ), k as (
         select st.*,
                case status when 'succeeded' then case when r2 < 0.95 then 1 else 2 + floor(r3 * 2)::int end
                            when 'awaiting_retry' then 1 + floor(r3 * 5)::int
                            when 'dead_lettered' then 8 else 0 end as attempts
           from st
       )
       insert into deliveries (id, tenant_id, endpoint_id, event_id, event_type, livemode, payload, status, attempts,
                               attempts_total, next_attempt_at, generation, last_status_code, last_error,
                               created_at, updated_at)
       select 'dlv_' || lpad(to_hex(floor(extract(epoch from at) / 86400)::int), 4, '0') || left(md5('d' || n), 20),
              ${tenantId("t")},
              ${endpointId("t", `(floor(${u("p", 2)} * 1000)::int + s) % m`)}, event_id, type, true,
              '{"id":"' || event_id || '","type":"' || type || '","api_version":"2026-07-01","occurred_at":"' ||
              to_char(at - interval '1 second', 'YYYY-MM-DD"T"HH24:MI:SS"Z"') || '","tenant":"' || ${tenantId("t")} ||
              '","livemode":true,"data":{"object":{"booking_id":"bk_' || left(md5('b' || p), 16) ||
              '","starts_at":"' || to_char(at + interval '3 days', 'YYYY-MM-DD"T"HH24:MI:SS"Z"') ||
              '","status":"confirmed","service":"grooming","customer_ref":"cus_' || left(md5('c' || p), 12) ||
              '","location_ref":"loc_' || left(md5('l' || t), 12) || '","notes":"' || repeat('x', 120) || '"}}}',
              status, attempts, attempts,
              case when status = 'awaiting_retry' then ${t0} + interval '12 hours' + r2 * interval '6 hours' end,
              1,
              case status when 'succeeded' then 200 when 'held' then null else 500 end,
              case when status in ('awaiting_retry', 'dead_lettered') then 'HTTP 500 from the endpoint' end,
              at, at + attempts * interval '10 minutes'
         from k`,
    );
    await client.query(
      `insert into attempts (delivery_id, endpoint_id, number, attempted_at, duration_ms, succeeded, status_code, error,
                             response_body, response_body_truncated, delivery_created_at)
       select d.id, d.endpoint_id, k, d.created_at + (k - 1) * interval '10 minutes' + interval '1 second',
              20 + floor(${u("d.seq * 8 + k", 8)} * 300)::int,
              d.status = 'succeeded' and k = d.attempts_total,
              case when d.status = 'succeeded' and k = d.attempts_total then 200 else 500 end,
              case when d.status = 'succeeded' and k = d.attempts_total then null else 'HTTP 500' end,
              case when d.status = 'succeeded' and k = d.attempts_total then convert_to('ok', 'UTF8')
                   else convert_to('{"error":"internal"}', 'UTF8') end,
              false, d.created_at
         from deliveries d cross join lateral generate_series(1, d.attempts_total) k
        where d.seq > $1`,
      [lastSeq],
    );
    progress(Math.min(deliveries, 2 * p1));
  }
  await client.query("vacuum analyze");
  const seconds = (performance.now() - started) / 1000;
  const rows = await countRows(client, ["endpoints", "events", "deliveries", "attempts"]);
  const [sums] = (
    await client.query<{ attempts: string; events: string; tenants: string }>(
      `select sum(attempts_total) as attempts, count(distinct event_id) as events, count(distinct tenant_id) as tenants
         from deliveries`,
    )
  ).rows as [{ attempts: string; events: string; tenants: string }];
  const byStatus = (
    await client.query<{ status: string; n: string }>("select status, count(*) as n from deliveries group by status")
  ).rows;
  return {
    seconds,
    rows,
    expected: {
      attempts: Number(sums.attempts ?? 0),
      events: Number(sums.events),
      tenants: Number(sums.tenants),
      ...Object.fromEntries(byStatus.map((r) => [`status ${r.status}`, Number(r.n)])),
    },
  };
}

export async function countRows(client: pg.ClientBase, tables: readonly string[]): Promise<Record<string, number>> {
  const rows: Record<string, number> = {};
  for (const table of tables) {
    rows[table] = Number((await client.query<{ n: string }>(`select count(*) as n from ${table}`)).rows[0]!.n);
  }
  return rows;
}

/** Notification types (services/notify/src/domain/notification.ts). */
const notificationTypes = ["reminder", "no_show", "cancelled", "rescheduled", "update"];

/**
 * Fills the migrated notify schema with `notifications` notifications over the SPAN_DAYS before
 * `now` (see the file comment).
 */
export async function fillNotify(
  client: pg.ClientBase,
  notifications: number,
  now: Date,
  progress: (done: number) => void = () => undefined,
): Promise<FillResult> {
  const started = performance.now();
  await fillSession(client, "notify");
  const t0 = `'${now.toISOString()}'::timestamptz`;
  await client.query(
    `insert into tenants (id, name, status, activated, channel_ready, plan, activation_state, activated_at, created_at, updated_at)
     select ${tenantId("t")}, 'Growth tenant ' || t, 'active', true, true, 'commercial', 'live',
            ${t0} - interval '${SPAN_DAYS + 1} days', ${t0} - interval '${SPAN_DAYS + 1} days', ${t0} - interval '${SPAN_DAYS + 1} days'
       from generate_series(0, ${TENANTS - 1}) t`,
  );
  const types = sqlArray(notificationTypes);
  for (let n0 = 0; n0 < notifications; n0 += NOTIFICATIONS_PER_BATCH) {
    const n1 = Math.min(notifications, n0 + NOTIFICATIONS_PER_BATCH);
    const batch = `
      with b as (
        select n, t, ${tenantId("t")} as tenant_id,
               '1555' || lpad((floor(${u("n", 11)} * (50 + (hashint8extended(t::bigint, 12) & 2147483647) % 4951)))::int::text, 7, '0') as recipient,
               'ntf_' || left(md5('n' || n), 24) as id,
               ${t0} - interval '${SPAN_DAYS} days' + (n::float8 / ${notifications}) * interval '${SPAN_DAYS} days' as at,
               (${types})[1 + floor(${u("n", 13)} * ${notificationTypes.length})::int] as type,
               ${u("n", 14)} as r
          from (select n, ${tenantOf("n")} as t from generate_series(${n0}, ${n1 - 1}) n) x
      ), c as (
        select b.*, case when r < 0.97 then 'sent' when r < 0.99 then 'failed' else 'unknown' end as state,
               case when r < 0.6 then 'read' when r < 0.95 then 'delivered' when r < 0.97 then 'accepted'
                    when r < 0.99 then 'failed' end as delivery_status
          from b
      )`;
    await client.query(
      `${batch}
       insert into notification_commands (id, tenant_id, idempotency_key, type, recipient, state, failure_code, counted, month,
                                          request_id, created_at, updated_at, delivery_status, accepted_at, delivered_at, read_at, failed_at)
       select id, tenant_id, 'key-' || left(md5('k' || n), 20), type, recipient, state,
              case when state = 'failed' then 'channel.recipient_unreachable' end, false, to_char(at, 'YYYY-MM'),
              'req_' || left(md5('r' || n), 20), at, at + interval '5 seconds', delivery_status,
              case when state = 'sent' then at + interval '1 second' end,
              case when delivery_status in ('delivered', 'read') then at + interval '3 seconds' end,
              case when delivery_status = 'read' then at + interval '5 minutes' end,
              case when delivery_status = 'failed' then at + interval '1 second' end
         from c`,
    );
    await client.query(
      `${batch}
       insert into conversation_messages (id, tenant_id, recipient, notification_id, type, text, state, actor_reference,
                                          delegation_reference, created_at, updated_at)
       select 'msg_' || left(md5('m' || n), 24), tenant_id, recipient, id, type,
              'Hi! This is a reminder of your grooming appointment at Happy Paws on ' || to_char(at + interval '2 days', 'Dy DD Mon HH24:MI') ||
              '. Reply STOP to opt out.', state, 'api_key:key_' || left(md5('a' || t), 12), null, at, at + interval '5 seconds'
         from c`,
    );
    await client.query(
      `${batch}
       insert into provider_messages (notification_id, provider, provider_message_id, created_at)
       select id, 'whatsapp', 'wamid.' || md5('w' || n), at + interval '1 second' from c where state = 'sent'`,
    );
    await client.query(
      `${batch}
       insert into projection_work (tenant_id, notification_id, type, state, reason_code, created_at, updated_at, seq)
       select tenant_id, id, type, state, case when state = 'failed' then 'channel.recipient_unreachable' else '' end,
              at, at + interval '5 seconds', n + 1
         from c`,
    );
    await client.query(
      `${batch}
       insert into projection_activity (tenant_id, event_id, seq, type, occurred_at, subject_kind, subject_id, reason_code, state, actor)
       select tenant_id, 'evt_' || left(md5('a' || n), 24), n + 1, 'notification.' || state, at + interval '1 second',
              'notification', id, case when state = 'failed' then 'channel.recipient_unreachable' else '' end, state, ''
         from c`,
    );
    await client.query(
      `${batch}
       insert into projection_events (event_id, seq, tenant_id, type)
       select 'evt_' || left(md5('a' || n), 24), n + 1, tenant_id, 'notification.' || state from c`,
    );
    // The idempotency keys of the last day's sends (notify keeps a key 24 h).
    await client.query(
      `${batch}
       insert into idempotency_keys (scope, key, fingerprint, state, owner, result, created_at, locked_until, expires_at)
       select tenant_id, 'key-' || left(md5('k' || n), 20), md5('f' || n), 'completed', md5('o' || n)::uuid,
              ('{"notificationId":"' || id || '","state":"sent","type":"' || type || '","createdAt":"' ||
               to_char(at, 'YYYY-MM-DD"T"HH24:MI:SS"Z"') || '"}')::jsonb,
              at, at + interval '30 seconds', at + interval '24 hours'
         from c where at > ${t0} - interval '1 day'`,
    );
    progress(n1);
  }
  await client.query("vacuum analyze");
  const seconds = (performance.now() - started) / 1000;
  const rows = await countRows(client, [
    "tenants",
    "notification_commands",
    "conversation_messages",
    "provider_messages",
    "projection_work",
    "projection_activity",
    "projection_events",
    "idempotency_keys",
  ]);
  const [sent] = (
    await client.query<{ n: string }>("select count(*) as n from notification_commands where state = 'sent'")
  ).rows as [{ n: string }];
  return { seconds, rows, expected: { provider_messages: Number(sent.n) } };
}

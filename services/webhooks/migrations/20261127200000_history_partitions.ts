import type { Knex } from "@platform/service-kit/postgres";

export const name = "20261127200000_history_partitions";

/**
 * Expand: the delivery history (events, deliveries, attempts) in time-partitioned tables of a schema
 * of their own, `webhooks_history`, one partition per UTC day and a default partition for rows whose
 * day has none, so retention drops a day whole instead of deleting it row by row
 * (docs/operations.md, "Retention by day partitions" and "Expand/contract migrations").
 *
 * - `events` by `received_at`, `deliveries` by `created_at` (a delivery is created with its event's
 *   `received_at`), `attempts` by `delivery_created_at` (its delivery's `created_at`, copied): an
 *   event, its deliveries and their attempts share a day and leave together. Keys carry the day
 *   (Postgres: a partitioned table's unique keys include the partition key): primary keys
 *   `(id, day)`, `(event_id, endpoint_id, created_at)`; an event id is kept unique across days by
 *   its writers (an advisory lock on the id, then a check, then the insert).
 * - `seq` and attempt ids come from the old tables' sequences (cursors stay valid), no longer owned
 *   by the old columns, so a later drop of the old tables keeps them.
 * - `ensure_day_partitions(from, to)`: the days' partitions of the three tables, rows of those days
 *   moved out of the default partitions first. `drop_day_partitions(before)`: drops every day
 *   partition of a day before `before`.
 * - Forwarding triggers on the old tables (per statement, transition tables): what the previous
 *   release writes there lands in the new tables too (inserts, updates as the whole row, deletes).
 * - The fence: once this release has started (`layout.switched_at`), the old `deliveries` refuses
 *   every update but the outcome of an attempt claimed before (its lease still running), so a
 *   previous-release replica never sends from a stale row (a claim or a due-sweep bump of it).
 * - The backfill of the old rows (`backfill` holds each table's cursor) is the janitor's
 *   (db/history-backfill.ts), in batches, resumable and idempotent.
 * - recovery_items no longer references the old deliveries (its items name new ones).
 *
 * The service reads and writes only the new tables (its search_path puts `webhooks_history`
 * first). The contract (drop the triggers, the fence and the old tables) is the next release's:
 * history-contract.ts.
 */
export async function up(db: Knex): Promise<void> {
  await db.raw("create schema if not exists webhooks_history");
  await db.raw(`
    create table webhooks_history.events (
      id text not null,
      tenant_id text not null,
      type text not null,
      occurred_at timestamptz not null,
      data jsonb not null,
      livemode boolean not null,
      received_at timestamptz not null default now(),
      primary key (id, received_at)
    ) partition by range (received_at)`);
  await db.raw(`
    create table webhooks_history.deliveries (
      id text not null,
      seq bigint not null default nextval('webhooks.deliveries_seq_seq'),
      tenant_id text not null,
      endpoint_id text not null references webhooks.endpoints (id),
      event_id text not null,
      event_type text not null,
      livemode boolean not null,
      payload text not null,
      status text not null,
      attempts integer not null default 0,
      attempts_total integer not null default 0,
      next_attempt_at timestamptz,
      generation integer not null default 0,
      leased_until timestamptz,
      last_status_code integer,
      last_error text,
      created_at timestamptz not null default now(),
      updated_at timestamptz not null default now(),
      traceparent text,
      rate_slot_at timestamptz,
      rate_slot_attempt integer,
      primary key (id, created_at),
      constraint deliveries_event_endpoint_key unique (event_id, endpoint_id, created_at),
      constraint deliveries_status_check
        check (status in ('pending', 'succeeded', 'awaiting_retry', 'dead_lettered', 'held'))
    ) partition by range (created_at)`);
  await db.raw(`
    create table webhooks_history.attempts (
      id bigint not null default nextval('webhooks.attempts_id_seq'),
      delivery_id text not null,
      endpoint_id text not null,
      number integer not null,
      attempted_at timestamptz not null,
      duration_ms integer not null,
      succeeded boolean not null,
      status_code integer,
      error text,
      response_body bytea,
      response_body_truncated boolean not null default false,
      delivery_created_at timestamptz not null,
      primary key (id, delivery_created_at),
      constraint attempts_delivery_number_key unique (delivery_id, number, delivery_created_at)
    ) partition by range (delivery_created_at)`);
  // The old tables' indexes, on every partition.
  for (const statement of [
    "create index deliveries_ledger_idx on webhooks_history.deliveries (endpoint_id, seq desc)",
    "create index deliveries_tenant_log_idx on webhooks_history.deliveries (tenant_id, seq desc)",
    `create index deliveries_due_idx on webhooks_history.deliveries (next_attempt_at)
       where status in ('pending', 'awaiting_retry')`,
    "create index deliveries_held_idx on webhooks_history.deliveries (endpoint_id) where status = 'held'",
    `create index deliveries_backlog_idx on webhooks_history.deliveries (endpoint_id)
       include (status, next_attempt_at, updated_at) where status in ('pending', 'awaiting_retry', 'held')`,
    `create index deliveries_recoverable_idx on webhooks_history.deliveries (endpoint_id, created_at)
       where status in ('awaiting_retry', 'dead_lettered')`,
    "create index attempts_endpoint_time_idx on webhooks_history.attempts (endpoint_id, attempted_at)",
    "create table webhooks_history.events_default partition of webhooks_history.events default",
    "create table webhooks_history.deliveries_default partition of webhooks_history.deliveries default",
    "create table webhooks_history.attempts_default partition of webhooks_history.attempts default",
    "alter sequence webhooks.deliveries_seq_seq owned by none",
    "alter sequence webhooks.attempts_id_seq owned by none",
    "alter table recovery_items drop constraint if exists recovery_items_delivery_id_foreign",
  ])
    await db.raw(statement);

  await db.raw(`
    create function webhooks_history.ensure_day_partitions(p_from date, p_to date) returns integer
    language plpgsql as $$
    declare
      v_day date;
      v_table text;
      v_column text;
      v_name text;
      v_lower timestamptz;
      v_upper timestamptz;
      v_made integer := 0;
    begin
      -- One maker at a time (every replica's janitor calls it); the lock ends with the transaction.
      perform pg_advisory_xact_lock(hashtextextended('webhooks_history.partitions', 0));
      for v_day in select generate_series(p_from, p_to, interval '1 day')::date loop
        v_lower := v_day::timestamp at time zone 'UTC';
        v_upper := (v_day + 1)::timestamp at time zone 'UTC';
        foreach v_table in array array['events', 'deliveries', 'attempts'] loop
          v_name := v_table || '_p' || to_char(v_day, 'YYYYMMDD');
          continue when to_regclass('webhooks_history.' || v_name) is not null;
          v_column := case v_table when 'events' then 'received_at' when 'deliveries' then 'created_at'
                      else 'delivery_created_at' end;
          execute format('create table webhooks_history.%I (like webhooks_history.%I including defaults including constraints)',
                         v_name, v_table);
          -- Rows of the day that went to the default partition while the day had none move in.
          execute format('with moved as (delete from webhooks_history.%I where %I >= %L and %I < %L returning *) '
                         'insert into webhooks_history.%I select * from moved',
                         v_table || '_default', v_column, v_lower, v_column, v_upper, v_name);
          execute format('alter table webhooks_history.%I add constraint %I check (%I >= %L and %I < %L)',
                         v_name, v_name || '_day', v_column, v_lower, v_column, v_upper);
          execute format('alter table webhooks_history.%I attach partition webhooks_history.%I '
                         'for values from (%L) to (%L)', v_table, v_name, v_lower, v_upper);
          v_made := v_made + 1;
        end loop;
      end loop;
      return v_made;
    end $$`);
  await db.raw(`
    create function webhooks_history.drop_day_partitions(p_before date) returns setof text
    language plpgsql as $$
    declare
      v_name text;
    begin
      perform pg_advisory_xact_lock(hashtextextended('webhooks_history.partitions', 0));
      for v_name in
        select c.relname
          from pg_inherits i
          join pg_class c on c.oid = i.inhrelid
          join pg_class p on p.oid = i.inhparent
          join pg_namespace n on n.oid = p.relnamespace
         where n.nspname = 'webhooks_history' and p.relname in ('events', 'deliveries', 'attempts')
           and c.relname ~ '_p[0-9]{8}$'
           and to_date(right(c.relname, 8), 'YYYYMMDD') < p_before
         order by to_date(right(c.relname, 8), 'YYYYMMDD'), p.relname
      loop
        execute format('drop table webhooks_history.%I', v_name);
        return next v_name;
      end loop;
    end $$`);
  // Every day of the old rows, and the days the janitor makes ahead.
  await db.raw(`
    select webhooks_history.ensure_day_partitions(
      (least((select min(received_at) from webhooks.events), (select min(created_at) from webhooks.deliveries),
             now()) at time zone 'UTC')::date,
      ((now() + interval '3 days') at time zone 'UTC')::date)`);

  await db.raw(`
    create table webhooks_history.backfill (
      table_name text primary key,
      after_key text,
      rows_copied bigint not null default 0,
      done_at timestamptz
    )`);
  await db.raw("insert into webhooks_history.backfill (table_name) values ('events'), ('deliveries'), ('attempts')");
  // One row: when this release first started (null: only the previous release has run on it).
  await db.raw(`
    create table webhooks_history.layout (
      one boolean primary key default true check (one),
      switched_at timestamptz
    )`);
  await db.raw("insert into webhooks_history.layout (one) values (true)");

  await db.raw(`
    create function webhooks_history.forward_events_insert() returns trigger language plpgsql as $$
    begin
      perform pg_advisory_xact_lock(hashtextextended('webhooks.event:' || id, 0))
         from (select id from forwarded order by id) ids;
      insert into webhooks_history.events (id, tenant_id, type, occurred_at, data, livemode, received_at)
      select f.id, f.tenant_id, f.type, f.occurred_at, f.data, f.livemode, f.received_at from forwarded f
       where not exists (select 1 from webhooks_history.events e where e.id = f.id);
      return null;
    end $$`);
  await db.raw(`
    create function webhooks_history.forward_events_delete() returns trigger language plpgsql as $$
    begin
      delete from webhooks_history.events e using forwarded f where e.id = f.id and e.received_at = f.received_at;
      return null;
    end $$`);
  const deliveryColumns =
    "id, seq, tenant_id, endpoint_id, event_id, event_type, livemode, payload, status, attempts, attempts_total, " +
    "next_attempt_at, generation, leased_until, last_status_code, last_error, created_at, updated_at, traceparent, " +
    "rate_slot_at, rate_slot_attempt";
  const deliveryUpdates = deliveryColumns
    .split(", ")
    .filter((column) => column !== "id" && column !== "created_at")
    .map((column) => `${column} = excluded.${column}`)
    .join(", ");
  await db.raw(`
    create function webhooks_history.forward_deliveries_insert() returns trigger language plpgsql as $$
    begin
      insert into webhooks_history.deliveries (${deliveryColumns})
      select ${deliveryColumns} from forwarded f
       where not exists (select 1 from webhooks_history.deliveries d
                          where d.event_id = f.event_id and d.endpoint_id = f.endpoint_id)
      on conflict do nothing;
      return null;
    end $$`);
  await db.raw(`
    create function webhooks_history.forward_deliveries_update() returns trigger language plpgsql as $$
    begin
      insert into webhooks_history.deliveries (${deliveryColumns})
      select ${deliveryColumns} from forwarded
      on conflict (id, created_at) do update set ${deliveryUpdates};
      return null;
    end $$`);
  await db.raw(`
    create function webhooks_history.forward_deliveries_delete() returns trigger language plpgsql as $$
    begin
      delete from webhooks_history.deliveries d using forwarded f where d.id = f.id and d.created_at = f.created_at;
      return null;
    end $$`);
  await db.raw(`
    create function webhooks_history.fence_old_deliveries() returns trigger language plpgsql as $$
    begin
      if (select switched_at from webhooks_history.layout) is not null
         and not coalesce(old.leased_until > now(), false) then
        raise exception 'webhooks: this delivery is served by a newer release (webhooks_history)'
          using errcode = '55000';
      end if;
      return new;
    end $$`);
  await db.raw(`
    create function webhooks_history.forward_attempts_insert() returns trigger language plpgsql as $$
    begin
      insert into webhooks_history.attempts (id, delivery_id, endpoint_id, number, attempted_at, duration_ms,
                                             succeeded, status_code, error, response_body,
                                             response_body_truncated, delivery_created_at)
      select f.id, f.delivery_id, f.endpoint_id, f.number, f.attempted_at, f.duration_ms, f.succeeded,
             f.status_code, f.error, f.response_body, f.response_body_truncated, d.created_at
        from forwarded f join webhooks.deliveries d on d.id = f.delivery_id
      on conflict do nothing;
      return null;
    end $$`);
  await db.raw(`
    create function webhooks_history.forward_attempts_delete() returns trigger language plpgsql as $$
    begin
      delete from webhooks_history.attempts a using forwarded f where a.id = f.id;
      return null;
    end $$`);
  for (const [table, event, fn] of [
    ["events", "insert", "forward_events_insert"],
    ["events", "delete", "forward_events_delete"],
    ["deliveries", "insert", "forward_deliveries_insert"],
    ["deliveries", "update", "forward_deliveries_update"],
    ["deliveries", "delete", "forward_deliveries_delete"],
    ["attempts", "insert", "forward_attempts_insert"],
    ["attempts", "delete", "forward_attempts_delete"],
  ] as const)
    await db.raw(
      `create trigger ${table}_forward_${event} after ${event} on webhooks.${table}
         referencing ${event === "delete" ? "old" : "new"} table as forwarded
         for each statement execute function webhooks_history.${fn}()`,
    );
  await db.raw(`
    create trigger deliveries_fence before update on webhooks.deliveries
      for each row execute function webhooks_history.fence_old_deliveries()`);
}

export async function down(db: Knex): Promise<void> {
  for (const trigger of [
    "events_forward_insert on events",
    "events_forward_delete on events",
    "deliveries_forward_insert on deliveries",
    "deliveries_forward_update on deliveries",
    "deliveries_forward_delete on deliveries",
    "deliveries_fence on deliveries",
    "attempts_forward_insert on attempts",
    "attempts_forward_delete on attempts",
  ])
    await db.raw(`drop trigger if exists ${trigger}`);
  await db.raw("alter sequence deliveries_seq_seq owned by deliveries.seq");
  await db.raw("alter sequence attempts_id_seq owned by attempts.id");
  await db.raw("drop schema webhooks_history cascade");
}

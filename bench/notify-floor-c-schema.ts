/** bench:notify floor (c): the tables it writes, the subset of notify's schema a send touches (same keys and indexes). */
export const FLOOR_C_SCHEMA = `
  create schema bench_floor_c;
  create table bench_floor_c.tenants (id text primary key, activated boolean not null, channel_ready boolean not null);
  create table bench_floor_c.recipient_opt_outs (tenant_id text not null references bench_floor_c.tenants (id),
    recipient text not null, primary key (tenant_id, recipient));
  create table bench_floor_c.idempotency_keys (scope text not null, key text not null, fingerprint text not null,
    state text not null, owner uuid not null, result jsonb, created_at timestamptz not null default now(),
    locked_until timestamptz not null, expires_at timestamptz not null, primary key (scope, key));
  create index on bench_floor_c.idempotency_keys (expires_at);
  create table bench_floor_c.notification_commands (id text primary key, tenant_id text not null,
    idempotency_key text not null, type text not null, recipient text not null, state text not null,
    created_at timestamptz not null default now(), updated_at timestamptz not null default now());
  create index on bench_floor_c.notification_commands (tenant_id, idempotency_key);
  create table bench_floor_c.conversation_messages (seq bigserial primary key, id text not null unique,
    tenant_id text not null, recipient text not null,
    notification_id text not null references bench_floor_c.notification_commands (id), type text not null,
    text text not null, state text not null, actor_reference text not null, delegation_reference text,
    created_at timestamptz not null default now(), updated_at timestamptz not null default now());
  create index on bench_floor_c.conversation_messages (tenant_id, recipient, seq);
  create index on bench_floor_c.conversation_messages (notification_id);
  create table bench_floor_c.provider_messages (notification_id text primary key
    references bench_floor_c.notification_commands (id), provider text not null, provider_message_id text not null,
    created_at timestamptz not null default now());
  create table bench_floor_c.outbox (seq bigserial primary key, event_id text not null unique, subject text not null,
    payload bytea not null, created_at timestamptz not null default now());
  create table bench_floor_c.events (id text primary key, tenant_id text not null, type text not null,
    seq bigint not null, payload jsonb not null, recorded_at timestamptz not null default now());
  create table bench_floor_c.activity (seq bigint primary key, event_id text not null, tenant_id text not null,
    type text not null, created_at timestamptz not null default now());
  create index on bench_floor_c.activity (tenant_id, seq);
`;

/**
 * Floor (c)'s two statements of a send (the claim before the provider call, the outcome after it)
 * and a repeat's read of the stored result, as bench/notify-floor-c-grpc-server.ts runs them
 * (named: prepared once per connection) and bench/notify-statements.ts measures them.
 */
export const FLOOR_C_STATEMENTS = {
  claim: {
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
  },
  outcome: {
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
  },
  stored: {
    name: "floor_c_stored",
    text: "select fingerprint, result from bench_floor_c.idempotency_keys where scope = $1 and key = $2",
  },
};

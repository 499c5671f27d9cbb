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

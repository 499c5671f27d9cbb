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
  /**
   * FLOOR_BATCH=1: the claim for several sends in one statement (row n of the answer is send n's;
   * created_at null: claimed already or refused), as a careful engineer sharing commits would write it.
   */
  claimBatch: {
    name: "floor_c_claim_batch",
    text: `with input as (
           select * from unnest($1::text[], $2::text[], $3::text[], $4::uuid[], $5::text[], $6::text[], $7::text[],
             $8::text[], $9::text[], $10::text[], $11::text[]) with ordinality
             as i (tenant, key, fingerprint, owner, recipient, id, type, entry, text, actor, delegation, n)
         ), tenant as (
           select i.* from input i join bench_floor_c.tenants t on t.id = i.tenant and t.activated and t.channel_ready
           where not exists (select 1 from bench_floor_c.recipient_opt_outs o
                             where o.tenant_id = i.tenant and o.recipient = i.recipient)
         ), claimed as (
           insert into bench_floor_c.idempotency_keys (scope, key, fingerprint, state, owner, locked_until, expires_at)
           select tenant, key, fingerprint, 'in_progress', owner, now() + interval '30 seconds', now() + interval '24 hours'
           from tenant
           on conflict (scope, key) do nothing
           returning scope, key, owner
         ), command as (
           insert into bench_floor_c.notification_commands (id, tenant_id, idempotency_key, type, recipient, state)
           select t.id, t.tenant, t.key, t.type, t.recipient, 'dispatching'
           from tenant t join claimed c on c.scope = t.tenant and c.key = t.key and c.owner = t.owner
           returning id, created_at
         ), entry as (
           insert into bench_floor_c.conversation_messages
             (id, tenant_id, recipient, notification_id, type, text, state, actor_reference, delegation_reference)
           select t.entry, t.tenant, t.recipient, t.id, t.type, t.text, 'unknown', t.actor, t.delegation
           from tenant t join command c on c.id = t.id
           returning 1
         )
         select c.created_at, (select count(*) from entry) as entries
         from input i left join command c on c.id = i.id order by i.n`,
  },
  /** FLOOR_BATCH=1: the outcome for several sends in one statement. */
  outcomeBatch: {
    name: "floor_c_outcome_batch",
    text: `with input as (
           select * from unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::jsonb[], $7::text[],
             $8::text[], $9::bytea[]) as i (id, state, provider_message_id, tenant, key, result, event_id, subject, payload)
         ), command as (
           update bench_floor_c.notification_commands c set state = i.state, updated_at = now()
           from input i where c.id = i.id
           returning 1
         ), entry as (
           update bench_floor_c.conversation_messages m set state = i.state, updated_at = now()
           from input i where m.notification_id = i.id
           returning 1
         ), provider as (
           insert into bench_floor_c.provider_messages (notification_id, provider, provider_message_id)
           select id, 'sandbox', provider_message_id from input returning 1
         ), completed as (
           update bench_floor_c.idempotency_keys k set state = 'completed', result = i.result
           from input i where k.scope = i.tenant and k.key = i.key and k.state = 'in_progress'
           returning 1
         ), announced as (
           insert into bench_floor_c.outbox (event_id, subject, payload)
           select event_id, subject, payload from input returning 1
         )
         select (select count(*) from command) as commands`,
  },
  stored: {
    name: "floor_c_stored",
    text: "select fingerprint, result from bench_floor_c.idempotency_keys where scope = $1 and key = $2",
  },
};

import type { Knex } from "@platform/service-kit/postgres";

export const name = "20261127130000_tenant_channel_announcements";

/** The LISTEN channel (src/db/channel-repository.ts TENANT_CHANNELS_CHANNEL); payload: the tenant id. */
const TENANT_CHANNELS_CHANNEL = "notify_tenant_channels";

/**
 * Every change to what a send goes through (a tenant's number, token, templates or pace; a channel
 * connected or removed) is announced with pg_notify, delivered at commit, whoever makes it (a
 * notify replica, the admin CLI, an older release): notify's send path caches each tenant's route
 * (service-kit ListenedCache) and evicts it on the announcement, so a send never goes through a
 * number or token that was replaced. The check columns a periodic check writes are not announced.
 */
export async function up(db: Knex): Promise<void> {
  await db.raw(`
    create function announce_tenant_channel_change() returns trigger language plpgsql as $$
    begin
      perform pg_notify('${TENANT_CHANNELS_CHANNEL}', case when tg_op = 'DELETE' then old.tenant_id else new.tenant_id end);
      return null;
    end $$`);
  await db.raw(`
    create trigger tenant_channels_announce
      after insert or delete or update of phone_number_id, access_token_sealed, templates, messages_per_second
      on tenant_channels for each row execute function announce_tenant_channel_change()`);
}

export async function down(db: Knex): Promise<void> {
  await db.raw("drop trigger tenant_channels_announce on tenant_channels");
  await db.raw("drop function announce_tenant_channel_change()");
}

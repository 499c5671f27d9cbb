import type { Knex } from "@platform/service-kit/postgres";
import { recordSendV3 } from "./20261127120000_channel_pacing.js";

export const name = "20261128130000_pace_in_one_update";

/** record_send's pacing step as 20261127120000_channel_pacing wrote it. */
const lockThenUpdate = `
      if p_pace_key <> '' then
        select tat into v_tat from channel_pace where pace_key = p_pace_key for update;
        if not found then
          insert into channel_pace (pace_key, tat) values (p_pace_key, '-infinity') on conflict (pace_key) do nothing;
          select tat into v_tat from channel_pace where pace_key = p_pace_key for update;
        end if;
        v_now := clock_timestamp();
        v_tat := greatest(v_tat, v_now);
        v_wait := extract(epoch from (v_tat - v_now)) - p_pace_tolerance;
        if v_wait > 0 then
          -- Over the pace: the whole statement (key, count, command, transcript, events) rolls back.
          raise exception using errcode = 'PN429', message = 'channel paced', detail = v_wait::text;
        end if;
        update channel_pace set tat = v_tat + make_interval(secs => p_pace_interval)
        where pace_key = p_pace_key;
      end if;`;

/**
 * The same GCRA step in one conditional update: a send within the pace moves the number's
 * theoretical arrival time on, in the update that locks the row (the condition is checked again
 * on the row's latest version once a concurrent send's lock is released, with the clock read
 * then). Only a send over the pace, or the number's first, reads the row again: to say how long
 * to wait, or to make it. Before, every send locked the row (`select … for update`, a lock
 * written to the row and to the WAL) and then updated it: one write of the row per send instead
 * of two. A wait that is no longer positive when read (the clock moved on) tries the update again.
 */
const oneUpdate = `
      if p_pace_key <> '' then
        for v_attempt in 1..3 loop
          update channel_pace set tat = greatest(tat, clock_timestamp()) + make_interval(secs => p_pace_interval)
           where pace_key = p_pace_key and tat <= clock_timestamp() + make_interval(secs => p_pace_tolerance);
          exit when found;
          select tat into v_tat from channel_pace where pace_key = p_pace_key;
          if not found then
            insert into channel_pace (pace_key, tat) values (p_pace_key, '-infinity') on conflict (pace_key) do nothing;
            continue;
          end if;
          v_now := clock_timestamp();
          v_wait := extract(epoch from (greatest(v_tat, v_now) - v_now)) - p_pace_tolerance;
          if v_wait > 0 or v_attempt = 3 then
            -- Over the pace: the whole statement (key, count, command, transcript, events) rolls back.
            raise exception using errcode = 'PN429', message = 'channel paced', detail = greatest(v_wait, 0.001)::text;
          end if;
        end loop;
      end if;`;

function replaced(text: string, from: string, to: string): string {
  if (!text.includes(from)) throw new Error(`${name}: record_send's text has changed; the pacing step was not found`);
  return text.replace(from, to);
}

/** record_send (same 26 arguments, same answers) with the pacing step in one update. */
export const recordSendV4 = replaced(
  replaced(recordSendV3, "create function", "create or replace function"),
  lockThenUpdate,
  oneUpdate,
).replace("      v_wait double precision;\n", "      v_wait double precision;\n      v_attempt integer;\n");
if (!recordSendV4.includes("v_attempt integer;")) throw new Error(`${name}: v_attempt was not declared`);

/**
 * Replaces the function in place (the same signature): a notify of the previous release calls it
 * and gets the same answers, so this needs no expand and contract.
 */
export async function up(db: Knex): Promise<void> {
  await db.raw(recordSendV4);
}

export async function down(db: Knex): Promise<void> {
  await db.raw(replaced(recordSendV3, "create function", "create or replace function"));
}

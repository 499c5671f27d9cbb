import type { Knex } from "@platform/service-kit/postgres";
import { recordSendV3 } from "./20261127120000_channel_pacing.js";

export const name = "20261128130000_pace_without_row_lock";

/**
 * The same GCRA step with the number's theoretical arrival time in a sequence of its own
 * (pace_sequence: microseconds since 1970), read and set under a session advisory lock that is
 * released as soon as the slot is taken, inside the statement. A row updated by every send stayed
 * locked until the send's commit, its WAL flush included, so a number's sends were serialized on
 * their commits (no group commit: bench:notify's 32 clients on one number made 12% fewer sends
 * and spent 0.2 ms more of Postgres CPU each than with pacing off). A sequence is not
 * transactional: the slot is taken for good once set, even if the send's commit then fails (a
 * slot lost, never one too many), and after a crash the WAL holds the slot of every send that
 * committed (its commit record comes after the slot's).
 */
const sequenceStep = `
      -- Pacing (GCRA, domain/pacing.ts): last, so a send refused above never takes a slot. The
      -- number's lock is held only while its sequence is read and set, never until the commit.
      if p_pace_key <> '' then
        v_pace := pace_sequence(p_pace_key);
        v_pace_lock := hashtextextended('notify.pace|' || p_pace_key, 0);
        perform pg_advisory_lock(v_pace_lock);
        begin
          v_now_us := floor(extract(epoch from clock_timestamp()) * 1000000)::bigint;
          v_tat_us := greatest(coalesce(pg_sequence_last_value(v_pace), 0), v_now_us);
          v_wait := (v_tat_us - v_now_us) / 1000000.0 - p_pace_tolerance;
          if v_wait <= 0 then
            perform setval(v_pace, v_tat_us + ceil(p_pace_interval * 1000000)::bigint, true);
          end if;
        exception when others or query_canceled then
          -- A session lock outlives the transaction: never leave it held.
          perform pg_advisory_unlock(v_pace_lock);
          raise;
        end;
        perform pg_advisory_unlock(v_pace_lock);
        if v_wait > 0 then
          -- Over the pace: the whole statement (key, count, command, transcript, events) rolls back.
          raise exception using errcode = 'PN429', message = 'channel paced', detail = v_wait::text;
        end if;
      end if;`;

/**
 * The sequence of a number's pace (`pace_` and the md5 of its key, in the schema of record_send),
 * made on the number's first send; its first value is the number's channel_pace row's, if it has
 * one (the state the previous record_send left), else 0 (long ago: the whole burst is free).
 */
const paceSequence = `
    create function pace_sequence(p_key text) returns regclass language plpgsql as $$
    declare
      v_name text := 'pace_' || md5(p_key);
      v_seq regclass := to_regclass(quote_ident(v_name));
      v_tat timestamptz;
    begin
      if v_seq is not null then return v_seq; end if;
      begin
        execute format('create sequence %I minvalue 0 start 0', v_name);
      exception when duplicate_table or unique_violation then
        -- Another send made it meanwhile (and committed: this one waited for it).
        return to_regclass(quote_ident(v_name));
      end;
      v_seq := to_regclass(quote_ident(v_name));
      select tat into v_tat from channel_pace where pace_key = p_key;
      if found and isfinite(v_tat) then
        perform setval(v_seq, greatest(0, floor(extract(epoch from v_tat) * 1000000))::bigint, true);
      end if;
      return v_seq;
    end $$`;

function replaced(text: string, from: string, to: string): string {
  if (!text.includes(from))
    throw new Error(`${name}: record_send's text has changed; "${from.trim().slice(0, 40)}" was not found`);
  return text.replace(from, to);
}

/**
 * record_send's pacing step as 20261127120000_channel_pacing wrote it, its comment included: up to
 * the line after it (`outcome := 'recorded'`), taken from that migration's text.
 */
function rowLockedStepOf(text: string): string {
  const start = text.indexOf("\n      -- Pacing (GCRA");
  const end = text.indexOf("\n      outcome := 'recorded';", start);
  if (start < 0 || end < 0) throw new Error(`${name}: record_send's pacing step was not found`);
  return text.slice(start, end);
}

/** The previous record_send, as a statement that replaces the function in place (up's base, down's whole). */
export const recordSendV3InPlace = replaced(recordSendV3, "create function", "create or replace function");

/** record_send (the same 26 arguments, the same answers) pacing through pace_sequence. */
export const recordSendV4 = replaced(
  replaced(recordSendV3InPlace, rowLockedStepOf(recordSendV3), sequenceStep),
  "      v_wait double precision;\n",
  "      v_wait double precision;\n      v_pace regclass;\n      v_pace_lock bigint;\n      v_now_us bigint;\n      v_tat_us bigint;\n",
);

/**
 * Replaces record_send in place (the same signature): a notify of the previous release calls it
 * too and paces through the same sequences, so the releases never pace a number apart. channel_pace
 * stays (it seeds each number's sequence) until a later release drops it.
 */
export async function up(db: Knex): Promise<void> {
  await db.raw(paceSequence);
  await db.raw(recordSendV4);
}

export async function down(db: Knex): Promise<void> {
  await db.raw(recordSendV3InPlace);
  const { rows } = await db.raw<{ rows: { name: string }[] }>(
    "select relname as name from pg_class where relkind = 'S' and relname like 'pace\\_%' and relnamespace = current_schema()::regnamespace",
  );
  for (const { name: sequence } of rows) await db.raw(`drop sequence ${sequence}`);
  await db.raw("drop function pace_sequence(text)");
}

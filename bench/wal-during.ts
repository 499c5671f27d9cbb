// The server's WAL while a piece of work runs, for the benches that split it (bench:notify's open
// loops, bench:growth's pipeline burst): where it began and ended, how many checkpoints began
// meanwhile and how long before it the last completed one had started. The WAL positions and the
// checkpoint counter are the whole server's, so only a quiet server gives a true figure; each
// bench then reads the records between the two positions its own way (pg_walinspect).
import type pg from "pg";

export interface WalSpan<T> {
  result: T;
  /** The WAL positions before and after the work ("0/1A2B3C8"), for pg_walinspect's functions. */
  from: string;
  to: string;
  /** WAL bytes the server wrote meanwhile. */
  walBytes: number;
  /** Checkpoints (timed and requested) that began meanwhile. */
  checkpoints: number;
  /**
   * Seconds from the start of the last completed checkpoint to the work's (over checkpoint_timeout:
   * another one is under way, begun that much earlier).
   */
  sinceCheckpointS: number;
}

/** A WAL position ("16/B374D848") as a byte offset. */
const offset = (lsn: string): bigint => {
  const [high, low] = lsn.split("/");
  return (BigInt(`0x${high}`) << 32n) + BigInt(`0x${low}`);
};

/**
 * Runs `work` between two readings of the server's WAL position and checkpoint counter; with
 * `checkpointFirst`, right after a checkpoint, so every page's first change writes its whole page
 * to the WAL whatever came before (a timed checkpoint between a fill and a burst, or not).
 * Creates pg_walinspect in the client's database for the caller's reading of the records.
 */
export async function walDuring<T>(
  db: pg.Client,
  work: () => Promise<T>,
  options: { checkpointFirst: boolean },
): Promise<WalSpan<T>> {
  await db.query("create extension if not exists pg_walinspect");
  if (options.checkpointFirst) await db.query("checkpoint");
  const read = async () => {
    // A fresh statistics snapshot: in a transaction's first read, pg_stat_bgwriter is cached.
    await db.query("select pg_stat_clear_snapshot()");
    const { rows } = await db.query<{ n: string; lsn: string; since: number }>(
      `select (checkpoints_timed + checkpoints_req)::text as n, pg_current_wal_lsn()::text as lsn,
              extract(epoch from now() - (select checkpoint_time from pg_control_checkpoint()))::float8 as since
         from pg_stat_bgwriter`,
    );
    return rows[0]!;
  };
  const before = await read();
  const result = await work();
  const after = await read();
  return {
    result,
    from: before.lsn,
    to: after.lsn,
    walBytes: Number(offset(after.lsn) - offset(before.lsn)),
    checkpoints: Number(after.n) - Number(before.n),
    sinceCheckpointS: before.since,
  };
}

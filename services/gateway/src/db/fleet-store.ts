import { hostname } from "node:os";
import { randomBytes } from "node:crypto";
import type { Logger } from "pino";
import type { Knex } from "@platform/service-kit/postgres";

/**
 * The gateways count themselves: each keeps a row in `fleet_members` with a heartbeat, and a
 * gateway is live while its heartbeat is younger than the window. All times are the database's
 * `now()`, so the gateways' clocks never matter.
 */
export interface FleetStore {
  /**
   * One round trip: refreshes this gateway's heartbeat, deletes the rows older than the window
   * (gateways that died) and answers how many gateways are live, this one included.
   */
  beat(id: string, windowMs: number): Promise<number>;
  /** Removes this gateway's row (a clean stop), so the others count it out at their next beat. */
  leave(id: string): Promise<void>;
}

export function createFleetStore(db: Knex): FleetStore {
  return {
    async beat(id, windowMs) {
      // Data-modifying CTEs run once whether or not the query reads them; the final select sees
      // the table as it was before them, so this gateway is counted as 1 + the live others.
      const result = await db.raw<{ rows: { others: number }[] }>(
        `with purged as (
           delete from fleet_members where heartbeat_at < now() - make_interval(secs => :window)
         ), beat as (
           insert into fleet_members (id, heartbeat_at) values (:id, now())
           on conflict (id) do update set heartbeat_at = excluded.heartbeat_at
         )
         select cast(count(*) as int) as others from fleet_members
          where id <> :id and heartbeat_at >= now() - make_interval(secs => :window)`,
        { id, window: windowMs / 1000 },
      );
      return 1 + result.rows[0]!.others;
    },
    async leave(id) {
      await db("fleet_members").delete().where({ id });
    },
  };
}

/** A name that tells an operator which pod and process a row belongs to, unique per start. */
export function newFleetMemberId(): string {
  return `${hostname()}/${process.pid}/${randomBytes(4).toString("hex")}`;
}

export interface FleetHeartbeatOptions {
  id: string;
  intervalMs: number;
  windowMs: number;
  logger: Logger;
  /** Called with the live count after the first beat and whenever it changes. */
  onSize(size: number): void;
}

/**
 * Beats every `intervalMs` and reports the live count. While the database cannot be reached the
 * last count stays in force (the others, if they can reach it, count this gateway out after the
 * window); beating resumes on its own.
 */
export class FleetHeartbeat {
  private timer: NodeJS.Timeout | undefined;
  private inFlight: Promise<void> | undefined;
  private size: number | undefined;
  private failing = false;

  constructor(
    private readonly store: FleetStore,
    private readonly options: FleetHeartbeatOptions,
  ) {}

  /** Joins the fleet: the first beat must succeed (start-up fails otherwise), then beats on a timer. */
  async start(): Promise<number> {
    const size = await this.store.beat(this.options.id, this.options.windowMs);
    this.report(size);
    this.timer = setInterval(() => {
      this.inFlight ??= this.beat().finally(() => (this.inFlight = undefined));
    }, this.options.intervalMs);
    this.timer.unref();
    return size;
  }

  private async beat(): Promise<void> {
    try {
      this.report(await this.store.beat(this.options.id, this.options.windowMs));
      if (this.failing) this.options.logger.info("fleet heartbeat restored");
      this.failing = false;
    } catch (error) {
      if (!this.failing) {
        this.options.logger.warn(
          { err: error, fleetSize: this.size },
          "fleet heartbeat failed; keeping the last fleet size for the rate limit",
        );
      }
      this.failing = true;
    }
  }

  private report(size: number): void {
    if (size === this.size) return;
    this.options.logger.info(
      { fleetMember: this.options.id, fleetSize: size, previous: this.size ?? null },
      "gateway fleet size",
    );
    this.size = size;
    this.options.onSize(size);
  }

  /** Leaves the fleet: stops beating and deletes this gateway's row. */
  async stop(): Promise<void> {
    clearInterval(this.timer);
    await this.inFlight;
    try {
      await this.store.leave(this.options.id);
      this.options.logger.info({ fleetMember: this.options.id }, "left the fleet");
    } catch (error) {
      this.options.logger.warn(
        { err: error },
        "could not leave the fleet; the others count this gateway out after the window",
      );
    }
  }
}

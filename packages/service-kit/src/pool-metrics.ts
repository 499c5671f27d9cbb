/**
 * Connection pool gauges, read from the pools' own counters at each scrape (no query):
 *
 *   db_pool_connections{pool,state}   connections open, `state` `used` (lent out) or `idle`
 *   db_pool_max_connections{pool}     the pool's size limit (DATABASE_POOL_MAX)
 *   db_pool_pending_acquires{pool}    callers waiting for a connection (all of them are lent out)
 *
 * `pool` names the pool within the process: `main` for the service's knex pool, `send` for notify's
 * send-path pg pool. The alert DatabasePoolSaturated compares used to max.
 */
import type { Knex } from "knex";
import type pg from "pg";
import { Gauge, type Registry } from "prom-client";

export interface PoolState {
  used: number;
  idle: number;
  pendingAcquires: number;
  max: number;
}

/** Reads a pool's state now; undefined once the pool is gone (destroyed at shutdown). */
export type PoolProbe = () => PoolState | undefined;

/** The part of tarn's Pool (knex's pool) the gauges read. */
interface TarnPool {
  max: number;
  numUsed(): number;
  numFree(): number;
  numPendingAcquires(): number;
}

/** The state of a knex instance's (tarn) pool. */
export function knexPoolProbe(db: Knex): PoolProbe {
  return () => {
    const pool = (db.client as { pool?: TarnPool }).pool;
    if (!pool) return undefined;
    return { used: pool.numUsed(), idle: pool.numFree(), pendingAcquires: pool.numPendingAcquires(), max: pool.max };
  };
}

/** The state of a node-postgres Pool. */
export function pgPoolProbe(pool: pg.Pool): PoolProbe {
  return () => ({
    used: pool.totalCount - pool.idleCount,
    idle: pool.idleCount,
    pendingAcquires: pool.waitingCount,
    max: pool.options.max ?? 10,
  });
}

/** Registers the three pool gauges for the named pools of this process. */
export function registerDatabasePoolMetrics(registry: Registry, pools: Record<string, PoolProbe>): void {
  const states = () => Object.entries(pools).map(([pool, probe]) => [pool, probe()] as const);
  new Gauge({
    name: "db_pool_connections",
    help: "Open database connections of the pool, by state (used: lent out; idle).",
    labelNames: ["pool", "state"],
    registers: [registry],
    collect() {
      this.reset();
      for (const [pool, state] of states()) {
        if (!state) continue;
        this.set({ pool, state: "used" }, state.used);
        this.set({ pool, state: "idle" }, state.idle);
      }
    },
  });
  new Gauge({
    name: "db_pool_max_connections",
    help: "The most connections the pool opens.",
    labelNames: ["pool"],
    registers: [registry],
    collect() {
      this.reset();
      for (const [pool, state] of states()) if (state) this.set({ pool }, state.max);
    },
  });
  new Gauge({
    name: "db_pool_pending_acquires",
    help: "Callers waiting for a connection of the pool (every connection is lent out).",
    labelNames: ["pool"],
    registers: [registry],
    collect() {
      this.reset();
      for (const [pool, state] of states()) if (state) this.set({ pool }, state.pendingAcquires);
    },
  });
}

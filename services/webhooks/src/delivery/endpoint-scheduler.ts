/**
 * Fairness between endpoints inside one delivery worker. For each job the worker fetched it
 * decides: run it now (the endpoint has fewer than `endpointConcurrency` attempts in flight), let
 * it wait in the endpoint's line in memory (at most `endpointConcurrency` jobs per endpoint, at
 * most `maxQueued` in all; the line is served first in, first out as the endpoint's attempts
 * finish), or send it back for later (its nak delay), when the line is full.
 *
 * The delay is not a constant: the scheduler keeps, per endpoint, an estimate of how long an
 * attempt holds a slot (an EWMA of finished attempts, raised by the age of the oldest attempt still
 * in flight, so a receiver that hangs is recognised before its first timeout) and a horizon, the
 * time at which the last job sent back was told to return. Each one is spaced one
 * `estimate / endpointConcurrency` after the previous one, so a slow endpoint's backlog comes back
 * at about the pace the endpoint can take it, instead of all of it every second, crowding the
 * fetches (JetStream serves redeliveries first). A hanging endpoint's (10 s attempts, 8 slots) is
 * spaced 1.25 s per job, capped at `maxDeferMs` (with jitter, so a capped backlog does not return
 * at once). A fast endpoint over its limit mostly waits in its line, not on a round trip.
 *
 * No NATS, no timers: the worker asks and reports; `now` and `random` are injectable for tests.
 */

export interface EndpointSchedulerOptions {
  endpointConcurrency: number;
  /** Jobs waiting in lines, all endpoints together (each line holds at most endpointConcurrency). */
  maxQueued?: number;
  /** The shortest nak delay of a deferred job. */
  minDeferMs?: number;
  /** The longest: a backlog beyond it comes back within it and is deferred again. */
  maxDeferMs?: number;
  /** The slot time assumed for an endpoint with no finished attempt yet. */
  initialEstimateMs?: number;
  now?: () => number;
  random?: () => number;
}

/** A job admitted to run: `release()` when its attempt is over; it returns the next job of the endpoint's line, admitted. */
export interface Running<T> {
  item: T;
  release(): Running<T> | undefined;
}

export type Admission<T> =
  { kind: "run"; running: Running<T> } | { kind: "queued" } | { kind: "deferred"; delayMs: number; estimateMs: number };

export interface EndpointScheduler<T> {
  admit(endpointId: string, item: T): Admission<T>;
  /** Every job waiting in a line (to keep their messages alive). */
  waiting(): T[];
  /** How many jobs wait in lines, all endpoints together (without copying them). */
  queued(): number;
  /** Empties every line (at shutdown): the jobs that were waiting. */
  drain(): T[];
  /** Attempts in flight to the endpoint. */
  inFlight(endpointId: string): number;
  /** How many endpoints the scheduler currently remembers (bounded: idle ones are forgotten). */
  size(): number;
}

interface EndpointState<T> {
  /** Start times of the attempts in flight. */
  started: number[];
  line: T[];
  ewmaMs: number | undefined;
  horizon: number;
  lastUsed: number;
}

const ewmaWeight = 0.3;
const forgetAfterMs = 5 * 60_000;
const sweepEveryMs = 60_000;

export function createEndpointScheduler<T>(options: EndpointSchedulerOptions): EndpointScheduler<T> {
  const limit = Math.max(1, options.endpointConcurrency);
  const maxQueued = options.maxQueued ?? 64;
  const minDeferMs = options.minDeferMs ?? 50;
  const maxDeferMs = options.maxDeferMs ?? 60_000;
  const initialEstimateMs = options.initialEstimateMs ?? 250;
  const now = options.now ?? Date.now;
  const random = options.random ?? Math.random;
  const endpoints = new Map<string, EndpointState<T>>();
  let queued = 0;
  let lastSweep = now();

  function sweep(at: number) {
    if (at - lastSweep < sweepEveryMs) return;
    lastSweep = at;
    for (const [id, state] of endpoints) {
      if (
        state.started.length === 0 &&
        state.line.length === 0 &&
        state.horizon < at &&
        at - state.lastUsed > forgetAfterMs
      )
        endpoints.delete(id);
    }
  }

  function estimateOf(state: EndpointState<T>, at: number): number {
    const oldest = state.started.length > 0 ? at - Math.min(...state.started) : 0;
    return Math.max(state.ewmaMs ?? initialEstimateMs, oldest);
  }

  function start(state: EndpointState<T>, item: T): Running<T> {
    const at = now();
    state.started.push(at);
    let released = false;
    return {
      item,
      release() {
        if (released) return undefined;
        released = true;
        const end = now();
        const index = state.started.indexOf(at);
        if (index >= 0) state.started.splice(index, 1);
        const took = Math.max(0, end - at);
        state.ewmaMs = state.ewmaMs === undefined ? took : state.ewmaMs + ewmaWeight * (took - state.ewmaMs);
        state.lastUsed = end;
        const next = state.line.shift();
        if (next === undefined) return undefined;
        queued -= 1;
        return start(state, next);
      },
    };
  }

  return {
    admit(endpointId, item) {
      const at = now();
      sweep(at);
      let state = endpoints.get(endpointId);
      if (!state) {
        state = { started: [], line: [], ewmaMs: undefined, horizon: 0, lastUsed: at };
        endpoints.set(endpointId, state);
      }
      state.lastUsed = at;
      if (state.started.length < limit) return { kind: "run", running: start(state, item) };
      if (state.line.length < limit && queued < maxQueued) {
        state.line.push(item);
        queued += 1;
        return { kind: "queued" };
      }
      const estimateMs = estimateOf(state, at);
      const slot = Math.min(Math.max(state.horizon, at) + estimateMs / limit, at + maxDeferMs);
      state.horizon = slot;
      let delayMs = Math.max(minDeferMs, slot - at);
      // Spread what reaches the cap over its last fifth, so a capped backlog trickles back.
      if (slot - at >= maxDeferMs) delayMs = maxDeferMs * (0.8 + 0.2 * random());
      return { kind: "deferred", delayMs: Math.ceil(delayMs), estimateMs };
    },
    waiting: () => [...endpoints.values()].flatMap((state) => state.line),
    queued: () => queued,
    drain() {
      const all = [...endpoints.values()].flatMap((state) => state.line.splice(0));
      queued = 0;
      return all;
    },
    inFlight: (endpointId) => endpoints.get(endpointId)?.started.length ?? 0,
    size: () => endpoints.size,
  };
}

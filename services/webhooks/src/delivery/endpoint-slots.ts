/**
 * Per-endpoint admission for the delivery worker: at most `limit` attempts in flight to one
 * endpoint, and at most `limit` more jobs of that endpoint waiting in this process for one of
 * them to finish. A job beyond that is refused (the worker naks it with a delay). Waiting here,
 * instead of a nak per job whose endpoint is busy, keeps a saturated endpoint's jobs from
 * cycling through JetStream (one nak and redelivery each, a second apart) while bounding what
 * one endpoint can hold: `2 x limit` of the worker's budget, whatever its backlog.
 */
export interface EndpointSlots<T> {
  /** "run": a slot is taken; "wait": queued, handed back by a later `release`; "refuse": both full. */
  admit(endpointId: string, job: T): "run" | "wait" | "refuse";
  /** Frees the endpoint's slot; answers the next waiting job, which takes the slot over. */
  release(endpointId: string): T | undefined;
  /** Jobs waiting in all queues. */
  readonly waiting: number;
  /** Empties every queue (shutdown), answering what waited. */
  drain(): T[];
}

export function createEndpointSlots<T>(limit: number): EndpointSlots<T> {
  const running = new Map<string, number>();
  const queues = new Map<string, T[]>();
  let waiting = 0;
  return {
    admit(endpointId, job) {
      const busy = running.get(endpointId) ?? 0;
      if (busy < limit) {
        running.set(endpointId, busy + 1);
        return "run";
      }
      const queue = queues.get(endpointId) ?? [];
      if (queue.length >= limit) return "refuse";
      queue.push(job);
      queues.set(endpointId, queue);
      waiting += 1;
      return "wait";
    },
    release(endpointId) {
      const queue = queues.get(endpointId);
      const next = queue?.shift();
      if (next !== undefined) {
        waiting -= 1;
        if (queue!.length === 0) queues.delete(endpointId);
        return next; // the slot passes to it
      }
      const left = (running.get(endpointId) ?? 1) - 1;
      if (left <= 0) running.delete(endpointId);
      else running.set(endpointId, left);
      return undefined;
    },
    get waiting() {
      return waiting;
    },
    drain() {
      const all = [...queues.values()].flat();
      queues.clear();
      waiting = 0;
      return all;
    },
  };
}

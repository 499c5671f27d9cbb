/**
 * A burst of events fanned out to several HTTPS receivers, and the checks that nothing was lost:
 * for the crash and restart tests. Three endpoints of one tenant, each on its own receiver, with
 * filters such that not every endpoint matches every event (and one event type matches none).
 * Per 6 events: 7 deliveries.
 */
import { expect } from "vitest";
import {
  eventually,
  startReceiver,
  type TestCertificates,
  type TestReceiver,
} from "@platform/local-stack/https-receiver";
import { matchesFilters } from "../src/domain/event-catalog.js";
import type { WebhooksUnderTest } from "./webhooks-process.js";
import { sampleSnapshot } from "./sample-snapshot.js";

/** The settings that make recovery take seconds, not minutes (the defaults are for production). */
export const fastRecoveryEnv: Record<string, string> = {
  WEBHOOKS_DELIVERY_TIMEOUT: "2s",
  WEBHOOKS_LEASE: "7s",
  WEBHOOKS_SWEEP_INTERVAL: "1s",
  WEBHOOKS_SWEEP_OVERDUE: "10s",
  WEBHOOKS_RETRY_DELAYS: "1s,1s,1s,1s,1s,1s,1s",
  OUTBOX_REPUBLISH_AFTER: "3s",
};

const types = [
  "booking.created",
  "booking.cancelled",
  "conversation.started",
  "escalation.raised",
  "escalation.resolved",
] as const;

const filters: string[][] = [
  ["booking.*", "escalation.raised"],
  ["booking.created", "conversation.started"],
  ["conversation.*", "escalation.resolved"],
];

export interface BurstRig {
  tenantId: string;
  receivers: TestReceiver[];
  endpoints: { id: string; filters: string[] }[];
  close(): Promise<void>;
}

export async function startBurstRig(service: WebhooksUnderTest, certs: TestCertificates, tenantId: string) {
  const receivers: TestReceiver[] = [];
  const endpoints: BurstRig["endpoints"] = [];
  for (const eventTypes of filters) {
    const receiver = await startReceiver(certs);
    receivers.push(receiver);
    const { id } = await service.seedEndpoint({ tenantId, url: receiver.url, eventTypes });
    endpoints.push({ id, filters: eventTypes });
  }
  return {
    tenantId,
    receivers,
    endpoints,
    close: async () => {
      await Promise.all(receivers.map((receiver) => receiver.close()));
    },
  } satisfies BurstRig;
}

export interface BurstEvent {
  eventId: string;
  type: string;
}

export function burstEvents(label: string, count: number): BurstEvent[] {
  return Array.from({ length: count }, (_, i) => ({ eventId: `evt_${label}_${i}`, type: types[i % types.length]! }));
}

export interface Burst {
  /** Event ids whose PublishEvent was answered (the event is committed). */
  accepted: Set<string>;
  /** Publishes that failed and were tried again with the same event id. */
  retriedPublishes: number;
  /** The last failure of a publish (printed when the burst does not complete). */
  lastError?: Error;
  /** Resolves once every event was accepted. */
  done: Promise<void>;
}

/**
 * Publishes the events through EventService, `concurrency` at a time, each until it is
 * answered: a publish that fails (the process is away) is tried again with the same event id.
 */
export function publishBurst(
  service: WebhooksUnderTest,
  rig: BurstRig,
  events: readonly BurstEvent[],
  options: {
    concurrency?: number;
    deadlineMs?: number;
    /** Publishes another way than through `service`'s own process (a client balanced over several). */
    publish?: WebhooksUnderTest["publish"];
  } = {},
): Burst {
  const publish =
    options.publish ?? ((request: Parameters<WebhooksUnderTest["publish"]>[0]) => service.publish(request));
  const accepted = new Set<string>();
  const burst: Burst = { accepted, retriedPublishes: 0, done: Promise.resolve() };
  const deadline = Date.now() + (options.deadlineMs ?? 120_000);
  let next = 0;
  const lane = async () => {
    while (next < events.length) {
      const event = events[next++]!;
      for (;;) {
        try {
          const answer = await publish({
            tenantId: rig.tenantId,
            type: event.type,
            eventId: event.eventId,
            dataJson: sampleSnapshot(event.type, event.eventId),
          });
          expect(answer.eventId).toBe(event.eventId);
          accepted.add(event.eventId);
          break;
        } catch (error) {
          // A refusal is a bug of the test, never an outage to ride out.
          if ((error as { code?: number }).code === 3 || Date.now() > deadline) throw error;
          burst.retriedPublishes += 1;
          burst.lastError = error as Error;
          await new Promise((resolve) => setTimeout(resolve, 200));
        }
      }
    }
  };
  burst.done = Promise.all(Array.from({ length: options.concurrency ?? 8 }, lane)).then(() => undefined);
  return burst;
}

/** Requests received so far by all receivers. */
export function receivedCount(rig: BurstRig): number {
  return rig.receivers.reduce((sum, receiver) => sum + receiver.requests.length, 0);
}

interface Received {
  /** `${endpointId} ${eventId}`, deduplicated on the envelope id per receiver. */
  pairs: Set<string>;
  requests: number;
  deliveryIds: Set<string>;
}

/** What the receivers saw of the events `ours` (several bursts may share the receivers). */
function received(rig: BurstRig, ours: ReadonlyMap<string, unknown>): Received {
  const pairs = new Set<string>();
  const deliveryIds = new Set<string>();
  let requests = 0;
  rig.receivers.forEach((receiver, index) => {
    for (const request of receiver.requests) {
      const envelope = JSON.parse(request.body.toString("utf8")) as { id: string };
      if (!ours.has(envelope.id)) continue;
      requests += 1;
      pairs.add(`${rig.endpoints[index]!.id} ${envelope.id}`);
      deliveryIds.add(String(request.headers["service-delivery-id"]));
    }
  });
  return { pairs, requests, deliveryIds };
}

export interface BurstSummary {
  events: number;
  deliveries: number;
  received: number;
  duplicates: number;
  seconds: number;
}

/**
 * Waits until every accepted event reached every matching receiver and every delivery settled,
 * then checks: nothing pending, awaiting a retry, held, leased or dead-lettered; the outbox is
 * empty; the ledger's succeeded deliveries are exactly the (event, endpoint) pairs the receivers
 * saw, which are exactly those expected. Prints and returns a one-line summary.
 */
export async function expectNothingLost(
  scenario: string,
  service: WebhooksUnderTest,
  rig: BurstRig,
  burst: Burst,
  events: readonly BurstEvent[],
  startedAt: number,
  timeoutMs = 120_000,
): Promise<BurstSummary> {
  await burst.done;
  const typeOf = new Map(events.map((event) => [event.eventId, event.type]));
  const eventIds = [...typeOf.keys()];
  const expected = new Set<string>();
  for (const eventId of burst.accepted) {
    for (const endpoint of rig.endpoints) {
      if (matchesFilters(typeOf.get(eventId)!, endpoint.filters)) expected.add(`${endpoint.id} ${eventId}`);
    }
  }
  const unsettled = async () =>
    Number(
      (
        await service
          .db("deliveries")
          .where((q) => q.whereNot({ status: "succeeded" }).orWhereRaw("leased_until > now()"))
          .count<{ count: string }[]>()
      )[0]!.count,
    );
  try {
    await eventually(
      `${scenario}: every delivery received and settled`,
      async () => {
        const seen = received(rig, typeOf).pairs;
        if ([...expected].some((pair) => !seen.has(pair))) return false;
        const [row] = await service.db("deliveries").whereIn("event_id", eventIds).count<{ count: string }[]>();
        return Number(row?.count) >= expected.size && (await unsettled()) === 0;
      },
      timeoutMs,
    );
  } catch (error) {
    const seen = received(rig, typeOf).pairs;
    const missing = [...expected].filter((pair) => !seen.has(pair));
    const statuses = await service
      .db("deliveries")
      .select("status")
      .count<{ status: string; count: string }[]>()
      .groupBy("status")
      .catch(() => []);
    throw new Error(
      `${(error as Error).message}; missing ${missing.length} of ${expected.size} (e.g. ${missing.slice(0, 3).join(", ")}); ` +
        `deliveries by status ${JSON.stringify(statuses)}`,
    );
  }
  const seconds = (Date.now() - startedAt) / 1000;
  const got = received(rig, typeOf);
  const ledger = await service
    .db("deliveries")
    .where({ status: "succeeded" })
    .whereIn("event_id", eventIds)
    .select<{ id: string; endpoint_id: string; event_id: string }[]>("id", "endpoint_id", "event_id");
  const ledgerPairs = new Set(ledger.map((row) => `${row.endpoint_id} ${row.event_id}`));
  // Every accepted event was fanned out once, and nothing else was delivered.
  expect(burst.accepted.size).toBe(events.length);
  expect(ledger.length).toBe(ledgerPairs.size);
  expect([...ledgerPairs].sort()).toEqual([...expected].sort());
  expect([...got.pairs].sort()).toEqual([...expected].sort());
  // Every request a receiver saw came from a delivery of the ledger.
  const ledgerIds = new Set(ledger.map((row) => row.id));
  expect([...got.deliveryIds].filter((id) => !ledgerIds.has(id))).toEqual([]);
  expect(await unsettled()).toBe(0);
  expect(await service.db("outbox").select("event_id", "published_at")).toEqual([]);
  // Each succeeded delivery has exactly one succeeded attempt recorded.
  const [attempts] = await service
    .db("attempts")
    .join("deliveries", "deliveries.id", "attempts.delivery_id")
    .whereIn("deliveries.event_id", eventIds)
    .where({ succeeded: true })
    .count<{ count: string }[]>();
  expect(Number(attempts?.count)).toBe(ledger.length);
  const summary: BurstSummary = {
    events: burst.accepted.size,
    deliveries: ledger.length,
    received: got.requests,
    duplicates: got.requests - got.pairs.size,
    seconds: Math.round(seconds * 10) / 10,
  };
  console.log(
    `[${scenario}] events=${summary.events} deliveries=${summary.deliveries} received=${summary.received} ` +
      `duplicates=${summary.duplicates} retried_publishes=${burst.retriedPublishes} seconds=${summary.seconds}`,
  );
  return summary;
}

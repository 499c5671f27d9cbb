/**
 * Identifiers the webhooks service assigns: a type prefix and 24 lowercase hex characters, as
 * partners see them in the API and in envelopes: 96 random bits, except a delivery's (below).
 */
import { randomHex, randomId } from "@platform/service-kit/random-id";

const id = (prefix: string) => () => randomId(`${prefix}_`);

export const newEndpointId = id("ep");
export const newEventId = id("evt");
export const newRecoveryId = id("rcv");

export const ENDPOINT_ID = /^ep_[0-9a-f]{24}$/;
export const DELIVERY_ID = /^dlv_[0-9a-f]{24}$/;
export const RECOVERY_ID = /^rcv_[0-9a-f]{24}$/;

const DAY_MS = 86_400_000;

/** The UTC day `day` days after 1970-01-01, [start, end): a day partition of the history. */
const dayNumbered = (day: number) => ({ start: new Date(day * DAY_MS), end: new Date((day + 1) * DAY_MS) });

/** The UTC day that holds `at`, [start, end): the day partition of a row created at `at`. */
export function utcDay(at: Date): { start: Date; end: Date } {
  return dayNumbered(Math.floor(at.getTime() / DAY_MS));
}

/**
 * A delivery's id carries the UTC day it was created on (its `created_at`, the day partition that
 * holds it): "dlv_", the day as 4 hex digits (days since 1970-01-01, up to the year 2149), then 20
 * hex digits (80 random bits, as many as a ULID's). A lookup by id reads that day's partition
 * (deliveryIdDay) instead of probing every day's index. The shape is the one partners have always
 * seen ("dlv_" and 24 lowercase hex), so an id made before (96 random bits) names a day that is
 * not its own: who looks one up by its day looks in every day when the day does not have it.
 */
export function newDeliveryId(createdAt: Date): string {
  const day = Math.floor(createdAt.getTime() / DAY_MS);
  return `dlv_${day.toString(16).padStart(4, "0")}${randomHex(10)}`;
}

/**
 * The UTC day a delivery id names, [start, end): where a delivery made with it is. Undefined for
 * a string that is not a delivery id ("dlv_" and 24 lowercase hex), which names no day.
 */
export function deliveryIdDay(deliveryId: string): { start: Date; end: Date } | undefined {
  return DELIVERY_ID.test(deliveryId) ? dayNumbered(Number.parseInt(deliveryId.slice(4, 8), 16)) : undefined;
}

/** How far back byDay groups items by their ids' day (see there). */
const RECENT_DAYS = 40;

/**
 * `items` grouped by the day their delivery ids name (deliveryIdDay's start), in first-seen order,
 * for the days from RECENT_DAYS before `now` to the day after it. An item whose id names no day,
 * or a day outside those, is in no group, and its caller finds it the way that looks in every day:
 * an id made before ids carried their day names a random day (one in 1 600 falls in the window),
 * and a statement per such day would find nothing.
 */
export function byDay<T>(items: readonly T[], deliveryIdOf: (item: T) => string, now = new Date()): Map<Date, T[]> {
  const earliest = utcDay(now).start.getTime() - RECENT_DAYS * DAY_MS;
  const latest = now.getTime() + DAY_MS;
  const groups = new Map<number, T[]>();
  for (const item of items) {
    const start = deliveryIdDay(deliveryIdOf(item))?.start.getTime();
    if (start === undefined || start < earliest || start > latest) continue;
    const group = groups.get(start);
    if (group) group.push(item);
    else groups.set(start, [item]);
  }
  return new Map([...groups].map(([start, grouped]) => [new Date(start), grouped]));
}

/**
 * Identifiers the webhooks service assigns: a type prefix and 24 lowercase hex characters, as
 * partners see them in the API and in envelopes: 96 random bits, except a delivery's (below).
 */
import { randomBytes } from "node:crypto";

const id = (prefix: string) => () => `${prefix}_${randomBytes(12).toString("hex")}`;

export const newEndpointId = id("ep");

const DAY_MS = 86_400_000;

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
  return `dlv_${day.toString(16).padStart(4, "0")}${randomBytes(10).toString("hex")}`;
}

/**
 * The UTC day a delivery id names, [start, end): where a delivery made with it is. Undefined for
 * a string that is not a delivery id ("dlv_" and 24 lowercase hex), which names no day.
 */
export function deliveryIdDay(deliveryId: string): { start: Date; end: Date } | undefined {
  if (!DELIVERY_ID.test(deliveryId)) return undefined;
  const day = Number.parseInt(deliveryId.slice(4, 8), 16);
  return { start: new Date(day * DAY_MS), end: new Date((day + 1) * DAY_MS) };
}

/** How far back byDay groups items by their ids' day (see there). */
export const RECENT_DAYS = 40;

/**
 * `items` grouped by the day their delivery ids name (deliveryIdDay's start), in first-seen order,
 * for the days from RECENT_DAYS before `now` to the day after it. An item whose id names no day,
 * or a day outside those, is in no group, and its caller finds it the way that looks in every day:
 * an id made before ids carried their day names a random day (one in 1 600 falls in the window),
 * and a statement per such day would find nothing.
 */
export function byDay<T>(items: readonly T[], deliveryIdOf: (item: T) => string, now = new Date()): Map<Date, T[]> {
  const groups = new Map<number, { day: Date; items: T[] }>();
  const earliest = Math.floor(now.getTime() / DAY_MS - RECENT_DAYS) * DAY_MS;
  const latest = now.getTime() + DAY_MS;
  for (const item of items) {
    const day = deliveryIdDay(deliveryIdOf(item))?.start;
    if (!day || day.getTime() < earliest || day.getTime() > latest) continue;
    const group = groups.get(day.getTime());
    if (group) group.items.push(item);
    else groups.set(day.getTime(), { day, items: [item] });
  }
  return new Map([...groups.values()].map((group) => [group.day, group.items]));
}

export const newEventId = id("evt");

export const ENDPOINT_ID = /^ep_[0-9a-f]{24}$/;
export const DELIVERY_ID = /^dlv_[0-9a-f]{24}$/;
export const newRecoveryId = id("rcv");
export const RECOVERY_ID = /^rcv_[0-9a-f]{24}$/;

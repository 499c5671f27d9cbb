import { describe, expect, it } from "vitest";
import {
  eventCatalog,
  findEventType,
  InvalidEventFiltersError,
  isSubscribableEventType,
  matchesFilters,
  maxEventFilters,
  validateEventFilters,
} from "./event-catalog.js";

describe("the event catalog", () => {
  it("lists the ten types of spec 6.3, issue 22's two and issue 32's three with their emission status, all subscribable", () => {
    const subscribable = eventCatalog.filter((event) => event.subscribable);
    expect(subscribable.map((event) => [event.type, event.emission])).toEqual([
      ["conversation.started", "emitted"],
      ["booking.created", "emitted"],
      ["booking.cancelled", "emitted"],
      ["usage.threshold_crossed", "emitted"],
      ["usage.testing_allowance_threshold_crossed", "emitted"],
      ["capability.suspended", "emitted"],
      ["capability.restored", "emitted"],
      ["escalation.raised", "emitted"],
      ["escalation.resolved", "emitted"],
      ["tenant.activated", "emitted"],
      ["tenant.plan_changed", "emitted"],
      ["tenant.validation_failed", "emitted"],
      ["notification.delivered", "emitted"],
      ["notification.read", "emitted"],
      ["notification.failed", "emitted"],
    ]);
  });

  it("lists the five coming-soon types as not subscribable", () => {
    const comingSoon = eventCatalog.filter((event) => !event.subscribable);
    expect(comingSoon.map((event) => [event.type, event.emission])).toEqual([
      ["channel.disconnected", "coming_soon"],
      ["channel.quality_changed", "coming_soon"],
      ["task.completed", "coming_soon"],
      ["invoice.issued", "coming_soon"],
      ["usage.snapshot", "coming_soon"],
    ]);
  });

  it("names each type's family and cannot be changed at run time", () => {
    expect(findEventType("usage.threshold_crossed")?.family).toBe("usage");
    expect(findEventType("nope.nope")).toBeUndefined();
    expect(isSubscribableEventType("usage.snapshot")).toBe(false);
    expect(isSubscribableEventType("booking.created")).toBe(true);
    expect(Object.isFrozen(eventCatalog)).toBe(true);
  });
});

describe("validateEventFilters", () => {
  it.each([
    [["booking.created"], ["booking.created"]],
    [["capability.*"], ["capability.*"]],
    [
      ["usage.*", "booking.cancelled"],
      ["usage.*", "booking.cancelled"],
    ],
    [
      ["tenant.activated", "tenant.activated", "capability.*"],
      ["tenant.activated", "capability.*"],
    ],
  ])("accepts %j as %j", (filters, expected) => {
    expect(validateEventFilters(filters)).toEqual(expected);
  });

  it.each([
    [[], [["webhook.event_filters_required", undefined]]],
    [["booking.deleted"], [["webhook.event_type_unknown", "booking.deleted"]]],
    [["Booking.Created"], [["webhook.event_type_unknown", "Booking.Created"]]],
    [["*"], [["webhook.event_type_unknown", "*"]]],
    [["booking"], [["webhook.event_type_unknown", "booking"]]],
    [["booking.*.*"], [["webhook.event_type_unknown", "booking.*.*"]]],
    [["pets.*"], [["webhook.event_type_unknown", "pets.*"]]],
    [["invoice.issued"], [["webhook.event_type_not_subscribable", "invoice.issued"]]],
    [["usage.snapshot"], [["webhook.event_type_not_subscribable", "usage.snapshot"]]],
    [["channel.*"], [["webhook.event_type_not_subscribable", "channel.*"]]],
    [
      ["booking.created", "task.completed", "nope", "task.*"],
      [
        ["webhook.event_type_not_subscribable", "task.completed"],
        ["webhook.event_type_unknown", "nope"],
        ["webhook.event_type_not_subscribable", "task.*"],
      ],
    ],
  ])("refuses %j naming every problem", (filters, expected) => {
    try {
      validateEventFilters(filters);
      expect.unreachable();
    } catch (error) {
      expect(error).toBeInstanceOf(InvalidEventFiltersError);
      const invalid = error as InvalidEventFiltersError;
      expect(invalid.code).toBe("webhook.event_filters_invalid");
      expect(invalid.kind).toBe("invalid_argument");
      expect(invalid.problems.map((problem) => [problem.code, problem.filter])).toEqual(expected);
    }
  });

  it("refuses more distinct filters than the bound and never echoes an unbounded value", () => {
    const many = Array.from({ length: maxEventFilters + 1 }, (_, index) => `x${index}.*`);
    const long = `a.${"b".repeat(5000)}`;
    try {
      validateEventFilters([...many, long]);
      expect.unreachable();
    } catch (error) {
      const invalid = error as InvalidEventFiltersError;
      expect(invalid.problems[0]?.code).toBe("webhook.event_filters_too_many");
      expect(invalid.message.length).toBeLessThan(10_000);
      expect(invalid.problems.at(-1)?.filter?.length).toBeLessThan(100);
    }
  });
});

describe("matchesFilters", () => {
  it.each([
    ["capability.suspended", ["capability.*"], true],
    ["capability.restored", ["capability.*"], true],
    ["capability.suspended", ["capability.suspended"], true],
    ["capability.suspended", ["capability.restored"], false],
    ["capability.suspended", ["booking.*", "tenant.*"], false],
    ["booking.created", ["tenant.*", "booking.created"], true],
    ["usage.threshold_crossed", ["usage.*"], true],
    // coming soon: no filter reaches it, not even the family wildcard
    ["usage.snapshot", ["usage.*"], false],
    ["usage.snapshot", ["usage.snapshot"], false],
    // a wildcard is a family, not a prefix
    ["booking.created", ["book.*"], false],
    ["unknown.type", ["unknown.*", "unknown.type"], false],
    ["booking.created", [], false],
  ])("%s against %j: %s", (type, filters, expected) => {
    expect(matchesFilters(type, filters)).toBe(expected);
  });
});

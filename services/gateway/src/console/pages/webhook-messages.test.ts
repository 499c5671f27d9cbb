import type { Delivery, Endpoint, EventType } from "@platform/proto/webhooks/v1";
import { describe, expect, it } from "vitest";
import { messageLog } from "../views/webhook-messages.js";
import { messageLogFiltersFrom, messageLogQuery } from "./webhook-messages.js";

const none = { eventId: "", eventType: "", status: "", from: "", to: "" };

describe("the message log's filters", () => {
  it("reads each filter of the query once, trimmed; a repeated or absent one is empty", () => {
    expect(
      messageLogFiltersFrom({ eventId: " evt_1 ", eventType: "booking.created", status: ["held", "pending"], to: "" }),
    ).toEqual({ ...none, eventId: "evt_1", eventType: "booking.created" });
  });

  it("asks the service for a UTC window: from inclusive, to exclusive", () => {
    expect(messageLogQuery({ ...none, status: "succeeded", from: "2026-11-20T10:00", to: "2026-11-21T00:00" })).toEqual(
      {
        ok: true,
        query: {
          eventId: "",
          eventType: "",
          status: "succeeded",
          createdAfter: "2026-11-20T10:00:00.000Z",
          createdBefore: "2026-11-21T00:00:00.000Z",
        },
      },
    );
    expect(messageLogQuery(none)).toMatchObject({ ok: true, query: { createdAfter: "", createdBefore: "" } });
  });

  it("refuses a bad time, a window running backwards or empty, an unknown status, an overlong id", () => {
    const problem = (filters: Partial<typeof none>) => {
      const answer = messageLogQuery({ ...none, ...filters });
      return answer.ok ? undefined : answer.problem;
    };
    expect(problem({ from: "yesterday" })).toBe("Enter “Created from” as a date and time (UTC).");
    expect(problem({ to: "2026-11-20" })).toBe("Enter “Created before” as a date and time (UTC).");
    expect(problem({ from: "2026-11-20T10:00", to: "2026-11-20T10:00" })).toBe(
      "“Created from” must be before “Created before”.",
    );
    expect(problem({ status: "failed" })).toBe("Choose a status from the list.");
    expect(problem({ eventId: "e".repeat(201) })).toBe("An event id or type has at most 200 characters.");
  });
});

describe("the message log's markup", () => {
  const endpoint = { id: "ep_1", url: "https://hooks.example.com/a", description: "orders" } as Endpoint;
  const delivery = (id: string, endpointId: string, extra: Partial<Delivery> = {}) =>
    ({
      id,
      endpointId,
      eventId: `evt_${id}`,
      eventType: "booking.created",
      status: "succeeded",
      attemptsTotal: 1,
      livemode: true,
      createdAt: "2026-11-20T10:00:00.000Z",
      ...extra,
    }) as Delivery;
  const catalog = [{ type: "booking.created", subscribable: true }] as EventType[];

  it("links each delivery under its endpoint, names the endpoint, marks test events, keeps the filters", () => {
    const text = messageLog({
      filters: { ...none, status: "succeeded" },
      catalog,
      endpoints: new Map([["ep_1", endpoint]]),
      deliveries: [delivery("a", "ep_1"), delivery("b", "ep_2", { livemode: false, status: "dead_lettered" })],
      filtered: true,
      next: "/console/webhooks/messages?status=succeeded&cursor=c2",
    }).toString();
    expect(text).toContain('<a href="/console/webhooks/ep_1/deliveries/a" class="id">evt_a</a>');
    expect(text).toMatch(/<a href="\/console\/webhooks\/ep_1" class="endpoint-name"\s*>orders<\/a/);
    // An endpoint not among those listed shows its id.
    expect(text).toMatch(/<a href="\/console\/webhooks\/ep_2" class="endpoint-name"\s*>ep_2<\/a/);
    expect(text).toContain('<span class="tag">test</span>');
    expect(text).toContain(
      '<span class="status status-dead_lettered" data-status="dead_lettered">Dead-lettered</span>',
    );
    expect(text).toMatch(/<option value="succeeded" selected>Succeeded<\/option>/);
    expect(text).toContain('href="/console/webhooks/messages?status=succeeded&amp;cursor=c2" rel="next"');
    expect(text).toContain('data-label="Endpoint"');
  });

  it("says when nothing matches, and shows a refused filter beside the form", () => {
    const text = messageLog({
      filters: none,
      error: "“Created from” must be before “Created before”.",
      catalog,
      endpoints: new Map(),
      deliveries: [],
      filtered: true,
      next: "",
    }).toString();
    expect(text).toContain('<p id="no-messages" class="empty">No messages match these filters.</p>');
    expect(text).toContain('role="alert" id="form-error">“Created from” must be before “Created before”.</p>');
    expect(text).not.toContain('rel="next"');
  });
});

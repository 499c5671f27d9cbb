import type { Endpoint, EventType } from "@platform/proto/webhooks/v1";
import { describe, expect, it } from "vitest";
import { productWords } from "../page-error.js";
import { prettyPayload, RESENDABLE } from "./webhook-deliveries.js";
import { deleteConfirmation, subscribedTypes } from "./webhook-endpoints.js";

const type = (name: string, subscribable = true) => ({ type: name, subscribable }) as EventType;
const catalog = [
  type("booking.created"),
  type("booking.cancelled"),
  type("capability.degraded"),
  type("capability.restored"),
  type("usage.snapshot", false),
];

describe("the test-event picker's types", () => {
  it("is the endpoint's filters in order, wildcards expanded against the catalog's subscribable types, each once", () => {
    expect(subscribedTypes(["capability.*", "booking.created"], catalog)).toEqual([
      "capability.degraded",
      "capability.restored",
      "booking.created",
    ]);
    expect(subscribedTypes(["booking.created", "booking.*"], catalog)).toEqual([
      "booking.created",
      "booking.cancelled",
    ]);
  });

  it("leaves out what is not subscribable or not in the catalog", () => {
    expect(subscribedTypes(["usage.snapshot", "usage.*", "nope.x"], catalog)).toEqual([]);
  });
});

describe("the delivery page", () => {
  it("indents a JSON payload by two spaces and shows anything else as it is", () => {
    expect(prettyPayload('{"id":"evt_1","data":{"object":{"a":1}}}')).toBe(
      '{\n  "id": "evt_1",\n  "data": {\n    "object": {\n      "a": 1\n    }\n  }\n}',
    );
    expect(prettyPayload("not json {")).toBe("not json {");
  });

  it("offers to send again what is over or failed, never what is on its way", () => {
    expect(RESENDABLE).toEqual(["succeeded", "dead_lettered", "awaiting_retry"]);
  });
});

describe("the delete confirmation", () => {
  it("names the endpoint and carries the version shown, the CSRF token and a request key", () => {
    const endpoint = {
      id: "ep_1",
      url: "https://hooks.example.com/<x>",
      description: "orders",
      eventTypes: ["booking.*"],
      version: "7",
    } as Endpoint;
    const text = deleteConfirmation("csrf-token", endpoint).toString();
    expect(text).toContain('<dd id="delete-url">https://hooks.example.com/&lt;x&gt;</dd>');
    expect(text).toContain('<form method="post" action="/console/webhooks/ep_1/delete" id="delete-form"');
    expect(text).toContain('<input type="hidden" name="expectedVersion" value="7" />');
    expect(text).toContain('<input type="hidden" name="_csrf" value="csrf-token" />');
    expect(text).toMatch(/<input type="hidden" name="_idempotency" value="console-[0-9a-f-]{36}" \/>/);
    expect(text).toContain('<a href="/console/webhooks/ep_1">Cancel</a>');
  });
});

describe("error pages' words", () => {
  it("uses the product's words for a known code, else for the status, never the service's message", () => {
    expect(productWords(404, "webhook.endpoint_not_found")).toBe(
      "This webhook endpoint does not exist, or it was deleted.",
    );
    expect(productWords(404, "something.else")).toBe(
      "There is nothing here: the page does not exist, or what it showed was deleted.",
    );
    expect(productWords(418, undefined)).toContain("could not complete this request");
  });
});

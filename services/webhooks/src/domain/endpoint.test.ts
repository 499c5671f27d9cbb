import { describe, expect, it } from "vitest";
import {
  checkExpectedVersion,
  currentApiVersion,
  EndpointVersionMismatchError,
  InvalidEndpointError,
  validateEndpointUpdate,
  validateNewEndpoint,
  type NewEndpointInput,
} from "./endpoint.js";

const valid: NewEndpointInput = {
  url: "https://hooks.example.com/partner/events",
  description: "Production receiver",
  eventTypes: ["booking.created", "capability.*"],
};

function problemsOf(attempt: () => unknown): [string, string | null][] {
  try {
    attempt();
  } catch (error) {
    expect(error).toBeInstanceOf(InvalidEndpointError);
    expect((error as InvalidEndpointError).code).toBe("webhook.endpoint_invalid");
    return (error as InvalidEndpointError).problems.map((problem) => [problem.code, problem.field]);
  }
  throw new Error("expected InvalidEndpointError");
}

describe("validateNewEndpoint", () => {
  it("accepts an https endpoint and pins it to the current API version", () => {
    expect(currentApiVersion).toBe("2026-07-01");
    expect(validateNewEndpoint(valid)).toEqual({
      url: "https://hooks.example.com/partner/events",
      description: "Production receiver",
      eventTypes: ["booking.created", "capability.*"],
      apiVersion: "2026-07-01",
      rateLimit: null,
    });
  });

  it.each([
    ["https://HOOKS.Example.COM:443/a?b=1", "https://hooks.example.com/a?b=1"],
    ["https://hooks.example.com:8443", "https://hooks.example.com:8443/"],
    ["https://bücher.example/x", "https://xn--bcher-kva.example/x"],
  ])("stores %s in canonical form %s", (url, expected) => {
    expect(validateNewEndpoint({ ...valid, url }).url).toBe(expected);
  });

  it("trims the description and removes duplicate filters", () => {
    const endpoint = validateNewEndpoint({ ...valid, description: "  Ops  ", eventTypes: ["usage.*", "usage.*"] });
    expect(endpoint).toMatchObject({ description: "Ops", eventTypes: ["usage.*"] });
  });

  it.each([
    ["plain http", "http://hooks.example.com/x", [["webhook.url_not_https", "url"]]],
    ["another scheme", "ftp://hooks.example.com/x", [["webhook.url_not_https", "url"]]],
    ["not a URL", "hooks.example.com/x", [["webhook.url_invalid", "url"]]],
    ["an empty string", "", [["webhook.url_invalid", "url"]]],
    ["spaces around it", " https://hooks.example.com/ ", [["webhook.url_invalid", "url"]]],
    ["a user and password", "https://user:pw@hooks.example.com/", [["webhook.url_has_credentials", "url"]]],
    ["a user only", "https://user@hooks.example.com/", [["webhook.url_has_credentials", "url"]]],
    ["a fragment", "https://hooks.example.com/x#frag", [["webhook.url_has_fragment", "url"]]],
    ["an empty fragment", "https://hooks.example.com/x#", [["webhook.url_has_fragment", "url"]]],
    ["an overlong URL", `https://hooks.example.com/${"a".repeat(2048)}`, [["webhook.url_invalid", "url"]]],
    [
      "http with credentials and a fragment",
      "http://u:p@hooks.example.com/#x",
      [
        ["webhook.url_not_https", "url"],
        ["webhook.url_has_credentials", "url"],
        ["webhook.url_has_fragment", "url"],
      ],
    ],
  ])("refuses a URL with %s", (_label, url, expected) => {
    expect(problemsOf(() => validateNewEndpoint({ ...valid, url }))).toEqual(expected);
  });

  it.each([
    ["empty", "   "],
    ["501 characters", "d".repeat(501)],
    ["a newline", "line one\nline two"],
  ])("refuses a description that is %s", (_label, description) => {
    expect(problemsOf(() => validateNewEndpoint({ ...valid, description }))).toEqual([
      ["webhook.description_invalid", "description"],
    ]);
  });

  it("counts description length in code points", () => {
    expect(validateNewEndpoint({ ...valid, description: "🐾".repeat(500) }).description).toHaveLength(1000);
  });

  it("names every problem at once, filters included", () => {
    expect(
      problemsOf(() =>
        validateNewEndpoint({ url: "http://x.example/", description: "", eventTypes: ["invoice.issued", "x"] }),
      ),
    ).toEqual([
      ["webhook.url_not_https", "url"],
      ["webhook.description_invalid", "description"],
      ["webhook.event_type_not_subscribable", "eventTypes"],
      ["webhook.event_type_unknown", "eventTypes"],
    ]);
  });

  it("requires at least one filter", () => {
    expect(problemsOf(() => validateNewEndpoint({ ...valid, eventTypes: [] }))).toEqual([
      ["webhook.event_filters_required", "eventTypes"],
    ]);
  });
});

describe("validateEndpointUpdate", () => {
  it("returns only the fields given, validated", () => {
    expect(validateEndpointUpdate({ description: " New " })).toEqual({ description: "New" });
    expect(validateEndpointUpdate({ eventTypes: ["tenant.*"], url: "https://a.example/h" })).toEqual({
      eventTypes: ["tenant.*"],
      url: "https://a.example/h",
    });
  });

  it.each([
    ["nothing", {}, [["webhook.update_empty", null]]],
    ["an http URL", { url: "http://a.example/" }, [["webhook.url_not_https", "url"]]],
    ["no filters", { eventTypes: [] }, [["webhook.event_filters_required", "eventTypes"]]],
    [
      "two bad fields",
      { description: "", eventTypes: ["usage.snapshot"] },
      [
        ["webhook.description_invalid", "description"],
        ["webhook.event_type_not_subscribable", "eventTypes"],
      ],
    ],
  ])("refuses %s", (_label, input, expected) => {
    expect(problemsOf(() => validateEndpointUpdate(input))).toEqual(expected);
  });
});

describe("rateLimit", () => {
  it("is null unless given; 1 and 10000 pass; an update sets it or removes it with null", () => {
    expect(validateNewEndpoint(valid).rateLimit).toBeNull();
    expect(validateNewEndpoint({ ...valid, rateLimit: 1 }).rateLimit).toBe(1);
    expect(validateNewEndpoint({ ...valid, rateLimit: 10_000 }).rateLimit).toBe(10_000);
    expect(validateEndpointUpdate({ rateLimit: 20 })).toEqual({ rateLimit: 20 });
    expect(validateEndpointUpdate({ rateLimit: null })).toEqual({ rateLimit: null });
  });

  it.each([0, -5, 10_001, 2.5, Number.NaN])("refuses %d, on create and on update", (rateLimit) => {
    expect(problemsOf(() => validateNewEndpoint({ ...valid, rateLimit }))).toEqual([
      ["webhook.endpoint_invalid", "rateLimit"],
    ]);
    expect(problemsOf(() => validateEndpointUpdate({ rateLimit }))).toEqual([
      ["webhook.endpoint_invalid", "rateLimit"],
    ]);
  });
});

describe("checkExpectedVersion", () => {
  it("passes without an expectedVersion or with the current one", () => {
    expect(() => checkExpectedVersion(3, undefined)).not.toThrow();
    expect(() => checkExpectedVersion(3, 3)).not.toThrow();
  });

  it.each([2, 4])("refuses a stale or future expectedVersion %i as a failed precondition", (expected) => {
    const attempt = () => checkExpectedVersion(3, expected);
    expect(attempt).toThrow(EndpointVersionMismatchError);
    expect(attempt).toThrow(
      expect.objectContaining({ kind: "failed_precondition", code: "webhook.version_mismatch" }) as Error,
    );
  });
});

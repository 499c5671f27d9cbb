import { describe, expect, it } from "vitest";
import { ApiError } from "../../http/api-error.js";
import { tenantRoutes } from "../index.js";
import { webhookRoutes } from "./routes.js";
import { parseEndpointUpdate, parseNewEndpoint, parseRecover, parseTestDelivery } from "./shapes.js";

const refusal = (parse: () => unknown) => {
  try {
    parse();
  } catch (error) {
    expect(error).toBeInstanceOf(ApiError);
    const { status, message, options } = error as ApiError;
    return { status, code: options.code, detail: message };
  }
  throw new Error("expected a refusal");
};

describe("webhook request bodies", () => {
  it("passes a new endpoint's members on as given (values are the service's to judge)", () => {
    expect(parseNewEndpoint({ url: "http://x", description: "", eventTypes: [] })).toEqual({
      url: "http://x",
      description: "",
      eventTypes: [],
    });
  });

  it("names every problem of a new endpoint in one detail", () => {
    expect(refusal(() => parseNewEndpoint({ url: 1, eventTypes: [1], secret: "s" }))).toEqual({
      status: 400,
      code: "webhook.endpoint_invalid",
      detail:
        '"secret" is not a member of this request; url must be a string; description is required; eventTypes must be an array of strings',
    });
    expect(refusal(() => parseNewEndpoint([]))).toMatchObject({
      detail: expect.stringMatching(/JSON object/) as string,
    });
  });

  it("reads an update: only the members given, expectedVersion as a positive integer", () => {
    expect(parseEndpointUpdate({ description: "d", expectedVersion: 3 })).toEqual({
      url: undefined,
      description: "d",
      eventTypes: undefined,
      expectedVersion: "3",
    });
    expect(parseEndpointUpdate({ eventTypes: ["a.*"] })).toMatchObject({ eventTypes: { eventTypes: ["a.*"] } });
    for (const expectedVersion of [0, 1.5, "2", -1]) {
      expect(refusal(() => parseEndpointUpdate({ expectedVersion }))).toMatchObject({
        code: "webhook.endpoint_invalid",
        detail: "expectedVersion must be a positive integer (the endpoint's version)",
      });
    }
  });

  it("reads a test delivery's eventType", () => {
    expect(parseTestDelivery({ eventType: "booking.created" })).toBe("booking.created");
    expect(refusal(() => parseTestDelivery({}))).toMatchObject({
      code: "request.invalid",
      detail: "eventType is required",
    });
  });
});

describe("the webhooks route table", () => {
  it("is part of the tenant interface, all under webhook:manage, mutations exactly the non-GETs", () => {
    expect(webhookRoutes).toHaveLength(17);
    for (const route of webhookRoutes) {
      expect(tenantRoutes).toContain(route);
      expect(route).toMatchObject({ tag: "webhooks", scope: "webhook:manage", mutation: route.method !== "GET" });
    }
  });

  it("registers event-types and the message log before {endpointId}, so neither is taken for an endpoint", () => {
    const paths = tenantRoutes.map((route) => `${route.method} ${route.path}`);
    for (const fixed of ["event-types", "deliveries"]) {
      expect(paths.indexOf(`GET /api/v1/tenants/:tenantId/webhooks/${fixed}`)).toBeGreaterThan(-1);
      expect(paths.indexOf(`GET /api/v1/tenants/:tenantId/webhooks/${fixed}`)).toBeLessThan(
        paths.indexOf("GET /api/v1/tenants/:tenantId/webhooks/:endpointId"),
      );
    }
  });
});

describe("parseRecover", () => {
  it("takes since, until and dryRun (default false); refuses unknown members and wrong types with request.invalid", () => {
    expect(parseRecover({ since: "2026-07-01T00:00:00Z" })).toEqual({
      since: "2026-07-01T00:00:00Z",
      until: undefined,
      dryRun: false,
    });
    expect(parseRecover({ since: "a", until: "b", dryRun: true })).toEqual({ since: "a", until: "b", dryRun: true });
    for (const body of [{}, { since: 1 }, { since: "a", dryRun: "yes" }, { since: "a", other: 1 }, []]) {
      expect(refusal(() => parseRecover(body))).toMatchObject({ status: 400, code: "request.invalid" });
    }
  });
});

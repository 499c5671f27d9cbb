import { expect } from "vitest";
import { problemCodes } from "../src/http/problem.js";
import type { OpenApiContract } from "./openapi-contract.js";

export interface Answer {
  res: Response;
  body: Record<string, unknown>;
}

export interface CallOptions {
  /** The API key; undefined takes the default key, null sends none. */
  key?: string | null;
  headers?: Record<string, string>;
  body?: string;
}

/**
 * One HTTP call to the gateway, checked as every partner-visible answer must be: a safe
 * X-Request-Id; on the tenant interface the RateLimit headers, and for failures a problem
 * document whose correlationId, type and title match; and the served OpenAPI document (status,
 * body, declared headers, problem code).
 */
export function tenantApiCall(options: {
  gatewayUrl: () => string;
  defaultKey: () => string;
  contract: () => OpenApiContract;
}): (method: string, path: string, init?: CallOptions) => Promise<Answer> {
  return async (method, path, init = {}) => {
    const headers = new Headers(init.headers);
    const key = init.key === undefined ? options.defaultKey() : init.key;
    if (key !== null) headers.set("authorization", `Bearer ${key}`);
    const res = await fetch(`${options.gatewayUrl()}${path}`, { method, headers, body: init.body });
    const text = await res.text();
    const body = (text && res.headers.get("content-type")?.includes("json") ? JSON.parse(text) : {}) as Record<
      string,
      unknown
    >;
    expect(res.headers.get("x-request-id")).toMatch(/^[A-Za-z0-9._:-]{1,128}$/);
    if (path.startsWith("/api/") && !path.endsWith("openapi.json")) {
      expect(res.headers.get("ratelimit-policy")).toMatch(/^"default";q=\d+;w=\d+$/);
      expect(res.headers.get("ratelimit")).toMatch(/^"default";r=\d+;t=\d+$/);
    }
    if (res.status >= 400 && path.startsWith("/api/")) {
      expect(res.headers.get("content-type")).toMatch(/^application\/problem\+json/);
      expect(body.correlationId).toBe(res.headers.get("x-request-id"));
      expect(body.type).toBe(`urn:problem:${body.code as string}`);
      expect(body.title).toBe(problemCodes[body.code as keyof typeof problemCodes].title);
    }
    options.contract().check(method, path, res, body, "Problem");
    return { res, body };
  };
}

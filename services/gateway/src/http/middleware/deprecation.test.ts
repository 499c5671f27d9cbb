import type { Context } from "koa";
import { describe, expect, it } from "vitest";
import type { CatalogRoute } from "../route.js";
import { announceDeprecations } from "./deprecation.js";

const row = {
  method: "GET",
  path: "/v1/pets/:petId",
  deprecation: { since: "@1", sunset: "Thu, 05 Dec 2030 00:00:00 GMT", successorPath: "/v1/pets" },
} as CatalogRoute;

async function headersFor(method: string, path: string): Promise<Record<string, string>> {
  const headers: Record<string, string> = {};
  const ctx = { method, path, set: (values: Record<string, string>) => Object.assign(headers, values) };
  await announceDeprecations([row], "https://api.example")(ctx as unknown as Context, async () => {});
  return headers;
}

describe("deprecation announcements", () => {
  it("announces a deprecated row on GET and HEAD of its path, before anything else answers", async () => {
    const announced = {
      Deprecation: "@1",
      Sunset: "Thu, 05 Dec 2030 00:00:00 GMT",
      Link: '<https://api.example/v1/pets>; rel="successor-version"',
    };
    expect(await headersFor("GET", "/v1/pets/7")).toEqual(announced);
    expect(await headersFor("HEAD", "/v1/pets/abc")).toEqual(announced);
  });

  it("leaves other methods and paths alone", async () => {
    expect(await headersFor("POST", "/v1/pets/7")).toEqual({});
    expect(await headersFor("GET", "/v1/pets")).toEqual({});
    expect(await headersFor("GET", "/v1/pets/7/x")).toEqual({});
  });
});

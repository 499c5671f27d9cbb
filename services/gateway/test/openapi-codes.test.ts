import { describe, expect, it } from "vitest";
import { codeCatalogue, codesUsedAs, type CodeEntry } from "@platform/codes";
import { tenantOpenApi } from "../src/routes/documents.js";
import { problemCodes } from "../src/http/problem.js";
import { OpenApiContract } from "./openapi-contract.js";

/** The code catalogue as the tenant document carries it (issue item 5, spec 7.2). */
type Doc = ConstructorParameters<typeof OpenApiContract>[0] & {
  tags: { name: string; description?: string }[];
  components: { schemas: Record<string, Record<string, unknown>> };
};
const doc = JSON.parse(JSON.stringify(tenantOpenApi({ rateLimitPolicy: '"default";q=100;w=2' }))) as Doc;
const schemas = doc.components.schemas;
const internal = codesUsedAs("internal");
const errorsTag = doc.tags.find((tag) => tag.name === "Errors")?.description ?? "";

const edge = { "x-request-id": "req_1", ratelimit: '"default";r=99;t=1', "ratelimit-policy": '"default";q=100;w=2' };
/** `poll`: a poll-friendly read's 200 also carries its ETag. */
const json = (body: unknown, status = 200, type = "application/json", poll = false) =>
  new Response(JSON.stringify(body), {
    status,
    headers: {
      "content-type": type,
      ...edge,
      ...(poll ? { etag: '"AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"', "cache-control": "private, no-cache" } : {}),
    },
  });

describe("the tenant document documents the code catalogue", () => {
  it("ProblemCode: the enum is every problem code, x-codes gives each one's status, meaning and reaction", () => {
    const problemCode = schemas.ProblemCode as { enum: string[]; "x-codes": Record<string, Record<string, unknown>> };
    expect([...problemCode.enum].sort()).toEqual(Object.keys(problemCodes).sort());
    expect([...problemCode.enum].sort()).toEqual(codesUsedAs("problem").sort());
    for (const code of problemCode.enum) {
      const entry = codeCatalogue[code as keyof typeof codeCatalogue] as CodeEntry;
      expect(problemCode["x-codes"][code], code).toEqual({
        status: entry.status,
        title: entry.title,
        meaning: entry.meaning,
        reaction: entry.reaction,
      });
    }
    expect((schemas.Problem as { properties: { code: unknown } }).properties.code).toEqual({
      $ref: "#/components/schemas/ProblemCode",
    });
  });

  it("LastErrorCode and ReasonCode: one const per code with its meaning and reaction", () => {
    for (const [schema, use] of [
      ["LastErrorCode", "lastErrorCode"],
      ["ReasonCode", "reasonCode"],
    ] as const) {
      const oneOf = (schemas[schema] as { oneOf: { const: string; description: string }[] }).oneOf;
      expect(oneOf.map((member) => member.const).sort(), schema).toEqual(codesUsedAs(use).sort());
      for (const member of oneOf) {
        const entry = codeCatalogue[member.const as keyof typeof codeCatalogue] as CodeEntry;
        expect(member.description).toBe(`${entry.meaning} Client reaction: ${entry.reaction}`);
      }
    }
    expect(schemas.BlockingReasonCode).toBeDefined();
  });

  it("the Errors tag has spec 7.2's statuses and every partner-visible code, never an internal one", () => {
    for (const status of [400, 401, 403, 404, 409, 412, 429, 503]) expect(errorsTag).toContain(`| ${status} |`);
    expect(errorsTag).toContain("| 412 | version precondition failed");
    for (const code of [...codesUsedAs("problem"), ...codesUsedAs("lastErrorCode"), ...codesUsedAs("reasonCode")]) {
      expect(errorsTag, code).toContain(`| \`${code}\` |`);
    }
    for (const code of internal) expect(errorsTag, code).not.toContain(`\`${code}\``);
    expect(internal).toContain("webhook.url_not_https");
    expect((schemas.ProblemCode as { enum: string[] }).enum).not.toContain("webhook.url_not_https");
  });

  it("the response check refuses an uncatalogued lastErrorCode and a problem with an internal code", () => {
    const contract = new OpenApiContract(doc);
    const tenant = {
      id: "t1",
      name: "Acme",
      status: "active",
      activated: true,
      channelReady: true,
      version: 1,
      lastErrorCode: null as string | null,
      plan: "testing",
    };
    expect(() =>
      contract.check("GET", "/api/v1/tenants/t1", json(tenant, 200, "application/json", true), tenant),
    ).not.toThrow();
    const failing = { ...tenant, lastErrorCode: "account.tenant_unavailable" };
    expect(() =>
      contract.check("GET", "/api/v1/tenants/t1", json(failing, 200, "application/json", true), failing),
    ).not.toThrow();
    const made = { ...tenant, lastErrorCode: "account.made_up" };
    expect(() =>
      contract.check("GET", "/api/v1/tenants/t1", json(made, 200, "application/json", true), made),
    ).toThrow();
    const problem = {
      type: "urn:problem:webhook.url_not_https",
      title: "t",
      status: 400,
      detail: "d",
      code: "webhook.url_not_https",
      correlationId: "req_1",
    };
    expect(() =>
      contract.check("GET", "/api/v1/tenants/t1", json(problem, 400, "application/problem+json"), problem),
    ).toThrow();
  });
});

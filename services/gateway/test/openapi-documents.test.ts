import { Validator } from "@seriousme/openapi-schema-validator";
import { describe, expect, it } from "vitest";
import { catalogOpenApi, tenantOpenApi } from "../src/routes/documents.js";
import { problemCodes, type ProblemCode } from "../src/http/problem.js";
import { OpenApiContract } from "./openapi-contract.js";
import { providerCallbackProblemCodes } from "../src/routes/provider-callbacks/callbacks.js";

/**
 * The documents and the contract check without a stack: what each operation declares, and that
 * the check refuses responses the documents do not allow (so the end-to-end suites' checks can fail).
 */
const policy = '"default";q=100;w=2';
type Doc = ConstructorParameters<typeof OpenApiContract>[0];
const tenantDoc = JSON.parse(JSON.stringify(tenantOpenApi({ rateLimitPolicy: policy }))) as Doc;
const catalogDoc = JSON.parse(JSON.stringify(catalogOpenApi({ rateLimitPolicy: policy }))) as Doc;

const edge = { "x-request-id": "req_1", ratelimit: '"default";r=99;t=1', "ratelimit-policy": policy };
const problem = (code: ProblemCode, headers: Record<string, string> = {}) => {
  const { status, title } = problemCodes[code];
  const body = { type: `urn:problem:${code}`, title, status, detail: "d", code, correlationId: "req_1" };
  const res = new Response(JSON.stringify(body), {
    status,
    headers: { "content-type": "application/problem+json", ...edge, ...headers },
  });
  return { res, body };
};

interface Operation {
  responses: Record<string, { content?: Record<string, { schema: { allOf?: { properties?: object }[] } }> }>;
}
const operationOf = (doc: Doc, path: string, method: string) => doc.paths[path]![method] as unknown as Operation;

/** The codes an operation declares, over all its problem responses. */
function declaredCodes(operation: Operation): string[] {
  return Object.values(operation.responses).flatMap((response) => {
    const schema = response.content?.["application/problem+json"]?.schema;
    return (schema?.allOf?.[1]?.properties as { code?: { enum: string[] } } | undefined)?.code?.enum ?? [];
  });
}

describe.each([
  ["tenant", tenantDoc],
  ["catalog", catalogDoc],
])("the %s document", (_name, doc) => {
  it("is valid OpenAPI 3.1 by the specification's own schema (an outside validator)", async () => {
    const validator = new Validator();
    const result = await validator.validate(structuredClone(doc) as unknown as Parameters<Validator["validate"]>[0]);
    expect(result.errors ?? [], JSON.stringify(result.errors)).toEqual([]);
    expect({ valid: result.valid, version: validator.version }).toEqual({ valid: true, version: "3.1" });
  });
});

describe("tenant document", () => {
  const contract = new OpenApiContract(tenantDoc);

  it("lists per operation only the codes it can produce", () => {
    const get = declaredCodes(operationOf(tenantDoc, "/tenants/{tenantId}", "get"));
    expect(get).toContain("auth.key_missing");
    expect(get).toContain("tenant.not_found");
    expect(get).not.toContain("request.body_invalid");
    expect(get).not.toContain("request.idempotency_key_required");
    expect(get).not.toContain("idempotency.key_reused");
    expect(get).not.toContain("usage.limits_invalid");
    expect(Object.keys(operationOf(tenantDoc, "/tenants/{tenantId}", "get").responses)).not.toContain("413");

    const put = declaredCodes(operationOf(tenantDoc, "/tenants/{tenantId}/usage/limits", "put"));
    for (const code of ["request.body_invalid", "request.idempotency_key_required", "idempotency.key_reused"]) {
      expect(put).toContain(code);
    }
    expect(put).toContain("usage.limits_invalid");
    expect(declaredCodes(operationOf(tenantDoc, "/tenants/{tenantId}/usage/limits", "get"))).not.toContain(
      "usage.limits_invalid",
    );
  });

  it("declares every code of the catalogue somewhere, but route_not_found (no operation has it) and the provider callback path's", () => {
    const declared = new Set(
      Object.values(tenantDoc.paths).flatMap((p) =>
        Object.values(p).flatMap((o) => declaredCodes(o as unknown as Operation)),
      ),
    );
    const missing = Object.keys(problemCodes).filter((code) => !declared.has(code));
    // The provider's callback path is not a partner operation: its codes are in docs/errors.md only.
    expect(missing.sort()).toEqual(["request.route_not_found", ...providerCallbackProblemCodes].sort());
  });

  it("accepts a well-formed problem", () => {
    const { res, body } = problem("tenant.not_found");
    expect(() => contract.check("GET", "/api/v1/tenants/t1", res, body)).not.toThrow();
  });

  it("refuses a code the operation cannot produce", () => {
    const otherCode = problem("request.route_not_found"); // a 404, but not one getTenant answers
    expect(() => contract.check("GET", "/api/v1/tenants/t1", otherCode.res, otherCode.body)).toThrow(/allowed values/);
    const otherCodeSameStatus = problem("request.idempotency_key_required"); // a 400, but GET has no Idempotency-Key
    expect(() =>
      contract.check("GET", "/api/v1/tenants/t1", otherCodeSameStatus.res, otherCodeSameStatus.body),
    ).toThrow(/allowed values/);
    const otherStatus = problem("idempotency.key_reused"); // a 422: GET has no idempotency record
    expect(() => contract.check("GET", "/api/v1/tenants/t1", otherStatus.res, otherStatus.body)).toThrow(
      /does not document 422/,
    );
  });

  it("refuses a 401 without WWW-Authenticate and accepts one with it", () => {
    const bare = problem("auth.key_missing");
    expect(() => contract.check("GET", "/api/v1/tenants/t1", bare.res, bare.body)).toThrow(/WWW-Authenticate/);
    const challenged = problem("auth.key_missing", { "www-authenticate": 'Bearer realm="api"' });
    expect(() => contract.check("GET", "/api/v1/tenants/t1", challenged.res, challenged.body)).not.toThrow();
  });

  it("refuses a response without the rate-limit headers, or with another policy than the real one", () => {
    const { body } = problem("tenant.not_found");
    const without = new Response(JSON.stringify(body), {
      status: 404,
      headers: { "content-type": "application/problem+json", "x-request-id": "req_1" },
    });
    expect(() => contract.check("GET", "/api/v1/tenants/t1", without, body)).toThrow(/RateLimit/);
    const other = problem("tenant.not_found", { "ratelimit-policy": '"default";q=100;w=1' });
    expect(() => contract.check("GET", "/api/v1/tenants/t1", other.res, other.body)).toThrow(/RateLimit-Policy/);
  });

  it("checks a 405 to a method the path lacks against the path's 405, Allow included", () => {
    const bare = problem("request.method_not_allowed");
    expect(() => contract.check("DELETE", "/api/v1/tenants/t1", bare.res, bare.body, "Problem")).toThrow(/Allow/);
    const allowed = problem("request.method_not_allowed", { allow: "HEAD, GET" });
    expect(() => contract.check("DELETE", "/api/v1/tenants/t1", allowed.res, allowed.body, "Problem")).not.toThrow();
  });

  it("declares the Idempotency-Key syntax the gateway accepts", () => {
    const put = tenantDoc.paths["/tenants/{tenantId}/usage/limits"]!.put as unknown as {
      parameters: { name: string; schema: { pattern: string } }[];
    };
    const pattern = new RegExp(put.parameters.find((p) => p.name === "Idempotency-Key")!.schema.pattern, "u");
    expect(["abcdefgh", '"abc-123-x:y"', "a".repeat(128)].every((key) => pattern.test(key))).toBe(true);
    expect(["short", '"abcdefgh', "has space12", "a".repeat(129)].some((key) => pattern.test(key))).toBe(false);
  });

  it("has contact, license, and tags with descriptions on every operation", () => {
    const info = tenantDoc as unknown as { info: { contact: object; license: { name: string } } };
    expect(info.info.contact).toBeDefined();
    expect(info.info.license.name).toBeTruthy();
    for (const operations of Object.values(tenantDoc.paths)) {
      for (const operation of Object.values(operations) as unknown as { tags: string[]; description: string }[]) {
        expect(operation.tags.length).toBe(1);
        expect(operation.description).toBeTruthy();
      }
    }
  });
});

describe("catalog document", () => {
  const contract = new OpenApiContract(catalogDoc);
  const error = (status: number, code: string, headers: Record<string, string> = {}) => {
    const body = { code, message: "m", status };
    const res = new Response(JSON.stringify(body), {
      status,
      headers: { "content-type": "application/json", ...edge, ...headers },
    });
    return { res, body };
  };
  const deprecation = {
    deprecation: "@1795305600",
    sunset: "Thu, 05 Dec 2030 00:00:00 GMT",
    link: '</v1/pets>; rel="successor-version"',
  };

  it("refuses a code that is not its status's, and a status the operation cannot produce", () => {
    const wrong = error(400, "not_found");
    expect(() => contract.check("GET", "/v1/pets", wrong.res, wrong.body)).toThrow(/const/);
    const notFound = error(404, "not_found");
    expect(() => contract.check("GET", "/v1/pets", notFound.res, notFound.body)).toThrow(/does not document 404/);
  });

  it("requires the deprecation headers on every getPet answer, errors included", () => {
    const bare = error(401, "unauthorized", { "www-authenticate": 'Bearer realm="api"' });
    expect(() => contract.check("GET", "/v1/pets/1", bare.res, bare.body)).toThrow(/Deprecation/);
    const announced = error(401, "unauthorized", { "www-authenticate": 'Bearer realm="api"', ...deprecation });
    expect(() => contract.check("GET", "/v1/pets/1", announced.res, announced.body)).not.toThrow();
  });

  it("requires the rate-limit headers on listPets' 200", () => {
    const res = new Response("[]", {
      status: 200,
      headers: { "content-type": "application/json", "x-request-id": "r" },
    });
    expect(() => contract.check("GET", "/v1/pets", res, [])).toThrow(/RateLimit/);
  });

  it("declares the name, categoryId and petId bounds the gateway enforces", () => {
    const schemas = (catalogDoc as unknown as { components: { schemas: Record<string, { properties: object }> } })
      .components.schemas;
    const newPet = schemas.NewPet!.properties as Record<
      string,
      { pattern?: string; minimum?: number; maximum?: number }
    >;
    expect(newPet.categoryId).toMatchObject({ minimum: 1, maximum: Number.MAX_SAFE_INTEGER });
    const name = new RegExp(newPet.name!.pattern!, "u");
    expect(["Rex", "  Rex  ", "a b", "🐶".repeat(200), ` ${"x".repeat(200)} `].every((n) => name.test(n))).toBe(true);
    expect(["", "   ", "x".repeat(201), "a\u0000b"].some((n) => name.test(n))).toBe(false);
    const getPet = catalogDoc.paths["/pets/{petId}"]!.get as unknown as { parameters: { schema: object }[] };
    expect(getPet.parameters[0]!.schema).toMatchObject({ type: "integer", format: "int64", minimum: 1 });
  });
});

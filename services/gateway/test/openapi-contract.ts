import { Ajv2020, type ValidateFunction } from "ajv/dist/2020.js";
import { expect } from "vitest";

interface OpenApiDocument {
  openapi: string;
  servers?: { url: string }[];
  paths: Record<string, Record<string, { responses: Record<string, unknown> }>>;
}

interface HeaderSpec {
  $ref?: string;
  required?: boolean;
  schema?: object;
}

interface ResponseSpec {
  headers?: Record<string, HeaderSpec>;
  content?: Record<string, { schema: object }>;
}

/**
 * Checks real HTTP responses against an OpenAPI 3.1 document: the status must be documented
 * for the operation, the media type must match, the body must validate against the schema
 * (JSON Schema 2020-12, the dialect of OpenAPI 3.1; the documents pin each error response's
 * `code` to the codes the operation can produce), every header declared `required` must be
 * present, and every declared header that is present must match its schema. A 405 to a method
 * the document does not have is checked against the 405 the path's operations declare.
 */
export class OpenApiContract {
  private readonly ajv = new Ajv2020({
    strict: false,
    allErrors: true,
    formats: { int64: true, uri: true, "date-time": true },
  });
  private readonly validators = new Map<string, ValidateFunction>();
  private readonly base: string;

  constructor(private readonly doc: OpenApiDocument) {
    expect(doc.openapi).toMatch(/^3\.1\./);
    this.ajv.addSchema({ ...doc, $id: "openapi.json" });
    this.base = doc.servers?.[0]?.url ?? "";
  }

  private validator(pointer: string): ValidateFunction {
    let validate = this.validators.get(pointer);
    if (!validate) {
      validate = this.ajv.compile({ $ref: `openapi.json#${pointer}` });
      this.validators.set(pointer, validate);
    }
    return validate;
  }

  /** The path template in the document that matches a concrete request path, if any. */
  template(path: string): string | undefined {
    const local = path.startsWith(this.base) ? path.slice(this.base.length) : path;
    return Object.keys(this.doc.paths).find((template) => {
      const pattern = template.replace(/[.*+?^$()|[\]\\]/g, "\\$&").replace(/\{[^}]+\}/g, "[^/]+");
      return new RegExp(`^${pattern}$`).test(local);
    });
  }

  /** Asserts that `res` (with its already-read body) is what the document promises. */
  check(method: string, path: string, res: Response, body: unknown, fallbackSchema?: string): void {
    const template = this.template(path.split("?")[0]!);
    const operations = template ? this.doc.paths[template] : undefined;
    const status = String(res.status);
    // A 405 answers a method the path lacks: the path's operations document it.
    const operationMethod =
      operations?.[method.toLowerCase()] !== undefined
        ? method.toLowerCase()
        : status === "405"
          ? Object.keys(operations ?? {}).find((m) => operations![m]!.responses["405"] !== undefined)
          : undefined;
    const escape = (s: string) => s.replaceAll("~", "~0").replaceAll("/", "~1");
    if (operationMethod === undefined) {
      // Routes that do not exist (404) or methods that are not allowed (405) answer the error shape.
      expect(fallbackSchema, `${method} ${path} is not in the document`).toBeDefined();
      expect(res.status).toBeGreaterThanOrEqual(400);
      const schemaPointer = `/components/schemas/${fallbackSchema!}`;
      this.assertValid(schemaPointer, body, `${method} ${path}`);
      return;
    }
    const operation = operations![operationMethod]!;
    expect(Object.keys(operation.responses), `${method} ${template} does not document ${status}`).toContain(status);
    const pointer = `/paths/${escape(template!)}/${operationMethod}/responses/${status}`;
    const spec = this.resolve(pointer) as ResponseSpec;
    for (const [name, declared] of Object.entries(spec.headers ?? {})) {
      const headerPointer = declared.$ref ? declared.$ref.slice(1) : `${pointer}/headers/${escape(name)}`;
      const header = this.resolve(headerPointer) as HeaderSpec;
      const value = res.headers.get(name);
      if (value === null) {
        expect(header.required ?? false, `${method} ${path} ${status} lacks the required header ${name}`).toBe(false);
        continue;
      }
      if (header.schema) this.assertValid(`${headerPointer}/schema`, value, `${method} ${path} header ${name}`);
    }
    if (spec.content) {
      const mediaType = (res.headers.get("content-type") ?? "").split(";")[0]!.trim();
      expect(Object.keys(spec.content), `${method} ${path} ${res.status} content type`).toContain(mediaType);
      this.assertValid(`${pointer}/content/${escape(mediaType)}/schema`, body, `${method} ${path} ${res.status}`);
    }
  }

  private resolve(pointer: string): unknown {
    return pointer
      .split("/")
      .slice(1)
      .map((part) => part.replaceAll("~1", "/").replaceAll("~0", "~"))
      .reduce<unknown>((node, key) => (node as Record<string, unknown>)[key], this.doc);
  }

  private assertValid(pointer: string, value: unknown, what: string): void {
    const validate = this.validator(pointer);
    const ok = validate(value);
    expect(
      ok,
      `${what} does not match ${pointer}: ${this.ajv.errorsText(validate.errors)}\n${JSON.stringify(value)}`,
    ).toBe(true);
  }
}

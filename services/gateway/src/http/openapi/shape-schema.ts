import { z } from "zod";

type JsonSchema = Record<string, unknown>;

/** The key order the served documents have always used, so a generated schema reads like the others. */
const keyOrder: Record<string, string[]> = {
  object: ["type", "description", "required", "additionalProperties", "properties"],
  array: ["type", "minItems", "maxItems", "items"],
};

function inDocumentOrder(schema: JsonSchema): JsonSchema {
  const first = keyOrder[String(schema.type)] ?? [];
  const keys = [...first.filter((key) => key in schema), ...Object.keys(schema).filter((key) => !first.includes(key))];
  const properties = schema.properties as Record<string, JsonSchema> | undefined;
  return Object.fromEntries(
    keys.map((key) => {
      if (key === "properties" && properties) {
        return [
          key,
          Object.fromEntries(Object.entries(properties).map(([name, value]) => [name, inDocumentOrder(value)])),
        ];
      }
      if (key === "items") return [key, inDocumentOrder(schema.items as JsonSchema)];
      return [key, schema[key]];
    }),
  );
}

/**
 * A request shape (request-shape.ts) as the JSON Schema of an OpenAPI 3.1 document: draft 2020-12,
 * what a client sends (io "input").
 */
export function shapeSchema(shape: z.ZodType): JsonSchema {
  const schema: JsonSchema = z.toJSONSchema(shape, { target: "draft-2020-12", io: "input" });
  delete schema.$schema; // the document's dialect is OpenAPI 3.1's
  return inDocumentOrder(schema);
}

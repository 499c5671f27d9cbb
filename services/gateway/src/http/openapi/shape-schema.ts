import { z } from "zod";

type JsonSchema = Record<string, unknown>;

/** The key order the served documents have always used, so a generated schema reads like the others. */
const keyOrder: Record<string, string[]> = {
  object: ["type", "description", "required", "additionalProperties", "properties"],
  array: ["type", "minItems", "maxItems", "items"],
  integer: ["type", "format", "description"],
};

function inDocumentOrder(schema: JsonSchema): JsonSchema {
  const first = ["$ref", "type", ...(keyOrder[String(schema.type)] ?? [])];
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

/** A shape with `.meta({ id })` is a component of the document: refer to it there. */
const componentRefs = (schema: JsonSchema): JsonSchema =>
  JSON.parse(JSON.stringify(schema).replaceAll('"#/$defs/', '"#/components/schemas/')) as JsonSchema;

function converted(shape: z.ZodType): { schema: JsonSchema; defs: Record<string, JsonSchema> } {
  const schema: JsonSchema = z.toJSONSchema(shape, { target: "draft-2020-12", io: "input" });
  const defs = (schema.$defs ?? {}) as Record<string, JsonSchema>;
  delete schema.$defs; // each is a component of the document
  delete schema.$schema; // the document's dialect is OpenAPI 3.1's
  return { schema, defs };
}

/**
 * A request shape (request-shape.ts) as the JSON Schema of an OpenAPI 3.1 document: draft 2020-12,
 * what a client sends (io "input"). Members declared with `.meta({ id })` refer to that component.
 */
export function shapeSchema(shape: z.ZodType): JsonSchema {
  return inDocumentOrder(componentRefs(converted(shape).schema));
}

/** A shape declared with `.meta({ id })`, as its own component. */
export function componentSchema(shape: z.ZodType, id: string): JsonSchema {
  const component = converted(shape).defs[id];
  if (!component) throw new Error(`${id} is not the id of this shape`);
  return inDocumentOrder(componentRefs(component));
}

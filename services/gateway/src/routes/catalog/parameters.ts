/** The OpenAPI parameters of the catalog's operations. */
export const limitParameter = {
  name: "limit",
  in: "query",
  description: "Page size; anything outside 1-100 is refused, never clamped.",
  schema: { type: "integer", minimum: 1, maximum: 100, default: 20 },
};

export const statusParameter = { name: "status", in: "query", schema: { $ref: "#/components/schemas/PetStatus" } };

export const cursorParameter = {
  name: "cursor",
  in: "query",
  description: "Opaque; taken from the `next` link of the previous page, valid for the same status only.",
  schema: { type: "string", pattern: "^[A-Za-z0-9_-]{1,200}$" },
};

export const petIdParameter = {
  name: "petId",
  in: "path",
  required: true,
  description: "A positive 64-bit integer in canonical decimal form (no sign, no leading zeros).",
  schema: { type: "integer", format: "int64", minimum: 1 },
};

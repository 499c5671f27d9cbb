import { componentSchema, shapeSchema } from "../../http/openapi/shape-schema.js";
import { catalogCodeForStatus } from "../../http/catalog-error.js";
import { GET_PET_SUNSET } from "./routes.js";
import { newPetShape, petStatusShape } from "./shapes.js";

/** The headers of getPet's deprecation (catalog-operation.ts refers to them). */
export const catalogHeaderComponents = {
  Deprecation: {
    description: "RFC 9745: getPet has been deprecated since this moment (an sf-date, epoch seconds).",
    required: true,
    schema: { type: "string", pattern: "^@[0-9]+$" },
  },
  Sunset: {
    description: "RFC 8594: getPet is removed at this moment.",
    required: true,
    schema: { type: "string", const: GET_PET_SUNSET },
  },
  "Successor-Link": {
    description: 'RFC 8288: `<…/v1/pets>; rel="successor-version"`.',
    required: true,
    schema: { type: "string", pattern: '^<[^>]*/v1/pets>; rel="successor-version"$' },
  },
};

/** The animal interface's schemas (routes.ts, shapes.ts). */
export const catalogSchemas = {
  PetStatus: componentSchema(petStatusShape, "PetStatus"),
  Pet: {
    type: "object",
    required: ["id", "name", "categoryId", "status"],
    properties: {
      id: { type: "integer", format: "int64", minimum: 1 },
      name: { type: "string", minLength: 1, maxLength: 200 },
      categoryId: { type: "integer", format: "int64", minimum: 1, maximum: 9007199254740991 },
      status: { $ref: "#/components/schemas/PetStatus" },
    },
  },
  NewPet: shapeSchema(newPetShape),
  Pets: { type: "array", items: { $ref: "#/components/schemas/Pet" } },
  Error: {
    type: "object",
    required: ["code", "message", "status"],
    properties: {
      code: { type: "string", enum: Object.values(catalogCodeForStatus) },
      message: { type: "string" },
      status: { type: "integer" },
    },
  },
};

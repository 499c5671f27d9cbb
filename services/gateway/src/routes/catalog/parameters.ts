import { queryParameters } from "../../http/query-shape.js";
import { listQueryShape } from "./shapes.js";

/** listPets' query parameters (limit, status, cursor). */
export const listQueryParameters = queryParameters(listQueryShape, { declareOptional: false });

export const petIdParameter = {
  name: "petId",
  in: "path",
  required: true,
  description: "A positive 64-bit integer in canonical decimal form (no sign, no leading zeros).",
  schema: { type: "integer", format: "int64", minimum: 1 },
};

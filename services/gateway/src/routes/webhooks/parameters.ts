import { deliveryStatuses } from "./shapes.js";

/** The OpenAPI parameters of the webhook routes. */
export const endpointIdParameter = {
  name: "endpointId",
  in: "path",
  required: true,
  description: '"ep_" and 24 lowercase hex; any other id is not found.',
  schema: { type: "string", maxLength: 200 },
};
export const deliveryIdParameter = {
  name: "deliveryId",
  in: "path",
  required: true,
  description: '"dlv_" and 24 lowercase hex; any other id is not found.',
  schema: { type: "string", maxLength: 200 },
};
export const expectedVersionParameter = {
  name: "expectedVersion",
  in: "query",
  required: false,
  description: "The endpoint's `version` as last read; when it has changed since, 412 `webhook.version_mismatch`.",
  schema: { type: "integer", minimum: 1 },
};

export const deliveryFilterParameters = [
  { name: "status", in: "query", required: false, schema: { type: "string", enum: deliveryStatuses } },
  { name: "eventType", in: "query", required: false, schema: { type: "string", maxLength: 200 } },
];
